// A JSON-schema subset compiled to grammar nodes (grammar-node.ts) for guided decoding: `type` (one or
// a list), `properties`, `required`, `additionalProperties`, `items`, `minItems`/`maxItems`,
// `minLength`/`maxLength` (code points), `pattern` (a regular subset, json-string-pattern.ts), `format`
// (json-string-formats.ts), `enum`/`const` of scalars, `anyOf`, and `minimum`/`maximum`/
// `exclusiveMinimum`/`exclusiveMaximum` (on numbers in decimal, json-number-bounds.ts); keywords as JSON Schema 2020-12 defines them
// (https://json-schema.org/draft/2020-12/json-schema-validation), so an absent `type` admits every
// type, each under the keywords that apply to it. Annotations (`title`, `description`, ...) constrain
// nothing and are passed over; any other keyword is refused with a 400 naming it and its path, never
// ignored, so a schema never means less here than the client meant. Leaves out `$ref`,
// `oneOf`/`not`, `allOf` but as a list of patterns, `multipleOf`, and enum values that are objects or arrays.
import {
  anyOfNode,
  arrayNode,
  byteString,
  newNodeId,
  type JsonNode,
  numberNode,
  objectNode,
  stringNode,
  tokenNode,
} from './grammar-node.ts';
import { ServeError } from './serve-error.ts';
import {
  type Bound,
  boundsAdmitSome,
  type DecimalBounds,
  decimalOf,
  decimalWithin,
} from './json-number-bounds.ts';
import { annotations, isObject, type Schema, SchemaProblem } from './json-schema-problem.ts';
import { boundedStringPattern, patternsOf, stringMatchers } from './json-string-constraints.ts';

const constraints = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'enum',
  'const',
  'anyOf',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'pattern',
  'format',
  // Only as a list of patterns (patternsOf).
  'allOf',
]);

const typeNames = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const;
type TypeName = (typeof typeNames)[number];

/** Deeper schemas are refused: each level is a frame of the automaton's stack. */
const maxDepth = 64;

let anyJsonNode: JsonNode | undefined;

/** Any JSON value (the schema `true` or `{}`). */
export function anyJson(): JsonNode {
  if (anyJsonNode) return anyJsonNode;
  const options: Exclude<JsonNode, { kind: 'any-of' }>[] = [];
  const any: JsonNode = { kind: 'any-of', id: newNodeId(), options };
  options.push(
    objectNode({ properties: new Map(), forbidden: [], required: [], additional: any }),
    arrayNode({ items: any, minItems: 0, maxItems: Number.POSITIVE_INFINITY }),
    stringNode({ minLength: 0, maxLength: Number.POSITIVE_INFINITY, values: null, pattern: null }),
    numberNode({ integer: false, minimum: undefined, maximum: undefined, decimalBounds: null }),
    tokenNode('true'),
    tokenNode('false'),
    tokenNode('null'),
  );
  anyJsonNode = any;
  return any;
}

/** Any JSON object (`response_format: {"type": "json_object"}`). */
export const anyJsonObject = (): JsonNode =>
  objectNode({ properties: new Map(), forbidden: [], required: [], additional: anyJson() });

/** How JSON.stringify writes a string, quotes left out, as a latin1 byte string; null if it needs `\u` for a lone surrogate. */
function canonical(text: string): string | null {
  const written = JSON.stringify(text).slice(1, -1);
  return /\\ud[89a-f]/i.test(written) ? null : byteString(written);
}

/**
 * Compiles `schema`; throws a 400 ServeError whose `param` is `field` and whose message names the
 * path inside the schema (`field.properties.city: "pattern" is not supported ...`).
 */
export function compileJsonSchema(schema: unknown, field: string): JsonNode {
  try {
    const node = compile(schema, field, 0);
    if (!node) throw new SchemaProblem(field, 'the schema admits no value');
    return node;
  } catch (error) {
    if (error instanceof SchemaProblem) {
      throw new ServeError('bad-request', `${error.path}: ${error.message}`, field);
    }
    throw error;
  }
}

/** The node for `schema`, or null when no value satisfies it. */
function compile(schema: unknown, path: string, depth: number): JsonNode | null {
  if (depth > maxDepth)
    throw new SchemaProblem(path, `schemas nested deeper than ${maxDepth} levels are not supported`);
  if (schema === true) return anyJson();
  if (schema === false) return null;
  if (!isObject(schema)) throw new SchemaProblem(path, 'a schema must be an object or a boolean');
  for (const key of Object.keys(schema)) {
    if (!annotations.has(key) && !constraints.has(key)) {
      throw new SchemaProblem(
        path,
        `keyword "${key}" is not supported by guided decoding in edgerl serve-model; drop it and check it in your own code`,
      );
    }
  }
  // An `allOf` that is not a list of patterns is refused whatever the type.
  if ('allOf' in schema) patternsOf(schema, path);
  if ('anyOf' in schema) return compileAnyOf(schema, path, depth);
  const types = typesOf(schema, path);
  const allowed = allowedValues(schema, path);
  const nodes: JsonNode[] = [];
  const add = (node: JsonNode | null) => {
    if (node) nodes.push(node);
  };
  if (types.has('object') && !allowed) add(compileObject(schema, path, depth));
  if (types.has('array') && !allowed) add(compileArray(schema, path, depth));
  if (types.has('string')) add(compileString(schema, path, allowed));
  if (types.has('number') || types.has('integer')) add(compileNumber(schema, path, types, allowed));
  for (const literal of [true, false] as const) {
    if (types.has('boolean') && (!allowed || allowed.includes(literal))) add(tokenNode(String(literal)));
  }
  if (types.has('null') && (!allowed || allowed.includes(null))) add(tokenNode('null'));
  return nodes.length > 0 ? anyOfNode(nodes) : null;
}

function compileAnyOf(schema: Schema, path: string, depth: number): JsonNode | null {
  const besides = Object.keys(schema).filter((key) => key !== 'anyOf' && constraints.has(key));
  if (besides.length > 0) {
    throw new SchemaProblem(
      path,
      `"anyOf" beside "${besides[0]}" is not supported; put each constraint inside the options`,
    );
  }
  const options = schema.anyOf;
  if (!Array.isArray(options) || options.length === 0) {
    throw new SchemaProblem(`${path}.anyOf`, 'must be a non-empty array of schemas');
  }
  const nodes = options
    .map((option, index) => compile(option, `${path}.anyOf.${index}`, depth + 1))
    .filter((node): node is JsonNode => node !== null);
  return nodes.length > 0 ? anyOfNode(nodes) : null;
}

function typesOf(schema: Schema, path: string): Set<TypeName> {
  const type = schema.type;
  if (type === undefined) return new Set(typeNames);
  const list = Array.isArray(type) ? type : [type];
  for (const name of list) {
    if (!typeNames.includes(name as TypeName)) {
      throw new SchemaProblem(
        `${path}.type`,
        `${JSON.stringify(name)} is not a JSON Schema type (${typeNames.join(', ')})`,
      );
    }
  }
  return new Set(list as TypeName[]);
}

/** The values `enum` and `const` leave (scalars only), or undefined when neither is given. */
function allowedValues(schema: Schema, path: string): unknown[] | undefined {
  let allowed: unknown[] | undefined;
  if ('enum' in schema) {
    if (!Array.isArray(schema.enum)) throw new SchemaProblem(`${path}.enum`, 'must be an array');
    allowed = schema.enum;
  }
  if ('const' in schema)
    allowed = allowed ? allowed.filter((value) => value === schema.const) : [schema.const];
  for (const value of allowed ?? []) {
    if (typeof value === 'object' && value !== null) {
      throw new SchemaProblem(path, 'enum and const values that are objects or arrays are not supported');
    }
  }
  return allowed;
}

function count(schema: Schema, key: string, path: string, fallback: number): number {
  const value = schema[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new SchemaProblem(`${path}.${key}`, 'must be a non-negative integer');
  }
  return value;
}

function compileObject(schema: Schema, path: string, depth: number): JsonNode | null {
  const { properties = {}, required = [], additionalProperties } = schema;
  if (!isObject(properties)) throw new SchemaProblem(`${path}.properties`, 'must be an object of schemas');
  if (!Array.isArray(required) || required.some((key) => typeof key !== 'string')) {
    throw new SchemaProblem(`${path}.required`, 'must be an array of strings');
  }
  const additional =
    additionalProperties === undefined
      ? anyJson()
      : compile(additionalProperties, `${path}.additionalProperties`, depth + 1);
  const known = new Map<string, JsonNode>();
  const forbidden: string[] = [];
  for (const [key, value] of Object.entries(properties)) {
    const node = compile(value, `${path}.properties.${key}`, depth + 1);
    const written = canonical(key);
    if (written === null) continue; // cannot be written under the key rules (grammar-automaton.ts)
    if (node) known.set(written, node);
    else forbidden.push(written);
  }
  const requiredKeys: string[] = [];
  for (const key of new Set(required as string[])) {
    const written = canonical(key);
    if (written === null || forbidden.includes(written)) return null;
    if (!known.has(written) && !additional) return null;
    requiredKeys.push(written);
  }
  return objectNode({ properties: known, forbidden, required: requiredKeys, additional });
}

function compileArray(schema: Schema, path: string, depth: number): JsonNode | null {
  if (Array.isArray(schema.items)) {
    throw new SchemaProblem(`${path}.items`, 'the array form of "items" (tuples) is not supported');
  }
  const items = schema.items === undefined ? anyJson() : compile(schema.items, `${path}.items`, depth + 1);
  const minItems = count(schema, 'minItems', path, 0);
  const maxItems = items ? count(schema, 'maxItems', path, Number.POSITIVE_INFINITY) : 0;
  if (minItems > maxItems) return null;
  return arrayNode({ items, minItems, maxItems });
}

function compileString(schema: Schema, path: string, allowed: unknown[] | undefined): JsonNode | null {
  const minLength = count(schema, 'minLength', path, 0);
  const maxLength = count(schema, 'maxLength', path, Number.POSITIVE_INFINITY);
  if (minLength > maxLength) return null;
  const matchers = stringMatchers(schema, path);
  if (!allowed) {
    if (matchers.length === 0) return stringNode({ minLength, maxLength, values: null, pattern: null });
    const pattern = boundedStringPattern(schema, path, minLength, maxLength);
    return pattern ? stringNode({ minLength, maxLength, values: null, pattern }) : null;
  }
  const values = allowed
    .filter((value): value is string => typeof value === 'string')
    .filter((value) => [...value].length >= minLength && [...value].length <= maxLength)
    .filter((value) => matchers.every((matcher) => matcher.test(value)))
    .map(canonical)
    .filter((value): value is string => value !== null);
  const distinct = [...new Set(values)];
  return distinct.length > 0 ? stringNode({ minLength, maxLength, values: distinct, pattern: null }) : null;
}

function bound(schema: Schema, key: string, path: string): number | undefined {
  const value = schema[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new SchemaProblem(`${path}.${key}`, 'must be a number');
  return value;
}

function compileNumber(
  schema: Schema,
  path: string,
  types: ReadonlySet<TypeName>,
  allowed: unknown[] | undefined,
): JsonNode | null {
  const integer = !types.has('number');
  const minimum = bound(schema, 'minimum', path);
  const maximum = bound(schema, 'maximum', path);
  const exclusiveMinimum = bound(schema, 'exclusiveMinimum', path);
  const exclusiveMaximum = bound(schema, 'exclusiveMaximum', path);
  const bounded = [minimum, maximum, exclusiveMinimum, exclusiveMaximum].some((value) => value !== undefined);
  if (bounded && !integer) return compileDecimal(schema, path, allowed);
  const lows = [
    minimum === undefined ? undefined : BigInt(Math.ceil(minimum)),
    exclusiveMinimum === undefined ? undefined : BigInt(Math.floor(exclusiveMinimum)) + 1n,
  ].filter((value): value is bigint => value !== undefined);
  const highs = [
    maximum === undefined ? undefined : BigInt(Math.floor(maximum)),
    exclusiveMaximum === undefined ? undefined : BigInt(Math.ceil(exclusiveMaximum)) - 1n,
  ].filter((value): value is bigint => value !== undefined);
  let low: bigint | undefined;
  for (const value of lows) if (low === undefined || value > low) low = value;
  let high: bigint | undefined;
  for (const value of highs) if (high === undefined || value < high) high = value;
  if (low !== undefined && high !== undefined && low > high) return null;
  if (!allowed) return numberNode({ integer, minimum: low, maximum: high, decimalBounds: null });
  const texts = allowed
    .filter((value): value is number => typeof value === 'number' && Number.isFinite(value))
    .filter((value) => !integer || Number.isInteger(value))
    .filter((value) => (low === undefined || value >= low) && (high === undefined || value <= high))
    .map((value) => JSON.stringify(value));
  const nodes = [...new Set(texts)].map(tokenNode);
  return nodes.length > 0 ? anyOfNode(nodes) : null;
}

/** The tighter of an inclusive and an exclusive bound (`upper`: the smaller one), exclusive on a tie. */
function tighter(
  inclusive: number | undefined,
  exclusive: number | undefined,
  upper: boolean,
): Bound | undefined {
  if (inclusive === undefined && exclusive === undefined) return undefined;
  if (exclusive === undefined) return { value: decimalOf(inclusive as number), exclusive: false };
  if (inclusive === undefined) return { value: decimalOf(exclusive), exclusive: true };
  const exclusiveWins = upper ? exclusive <= inclusive : exclusive >= inclusive;
  return exclusiveWins
    ? { value: decimalOf(exclusive), exclusive: true }
    : { value: decimalOf(inclusive), exclusive: false };
}

/** A `number` under bounds: written without an exponent, held to the bounds in decimal (json-number-bounds.ts). */
function compileDecimal(schema: Schema, path: string, allowed: unknown[] | undefined): JsonNode | null {
  const decimalBounds: DecimalBounds = {
    low: tighter(bound(schema, 'minimum', path), bound(schema, 'exclusiveMinimum', path), false),
    high: tighter(bound(schema, 'maximum', path), bound(schema, 'exclusiveMaximum', path), true),
  };
  if (!boundsAdmitSome(decimalBounds)) return null;
  if (!allowed) return numberNode({ integer: false, minimum: undefined, maximum: undefined, decimalBounds });
  const texts = allowed
    .filter((value): value is number => typeof value === 'number' && Number.isFinite(value))
    .filter((value) => decimalWithin(decimalBounds, decimalOf(value)))
    .map((value) => JSON.stringify(value));
  const nodes = [...new Set(texts)].map(tokenNode);
  return nodes.length > 0 ? anyOfNode(nodes) : null;
}
