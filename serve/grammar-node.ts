// The grammars guided decoding runs on, as plain data: JSON value nodes (what a JSON-schema subset
// compiles to, json-schema-grammar.ts) and the few text nodes around them that tool-call layouts and
// guided choice need (fixed text, sequences, alternatives, repetition, free text with a trigger).
// Leaves out running them (grammar-automaton.ts) and regex or EBNF grammars (a string's `pattern` is
// a DFA of its own, json-string-pattern.ts).
import type { DecimalBounds } from './json-number-bounds.ts';
import type { StringPattern } from './json-string-pattern.ts';

let nextId = 0;
/** Every node gets a distinct id: the automaton's state keys name nodes by it. */
export const newNodeId = () => nextId++;
const id = newNodeId;

/** A JSON object: known properties by their key as JSON.stringify writes it (UTF-8, as a latin1 string). */
export interface ObjectNode {
  readonly kind: 'object';
  readonly id: number;
  readonly properties: ReadonlyMap<string, JsonNode>;
  /** Keys that may not appear (their schema admits no value), same encoding. */
  readonly forbidden: readonly string[];
  readonly required: readonly string[];
  /** The schema of keys not in `properties`; null: no other keys. */
  readonly additional: JsonNode | null;
}

export interface ArrayNode {
  readonly kind: 'array';
  readonly id: number;
  /** null: the items' schema admits no value, so the array stays empty. */
  readonly items: JsonNode | null;
  readonly minItems: number;
  readonly maxItems: number;
}

export interface StringNode {
  readonly kind: 'string';
  readonly id: number;
  /** In code points, as JSON Schema counts them. */
  readonly minLength: number;
  readonly maxLength: number;
  /** The allowed values, each as JSON.stringify writes it without the quotes, as a latin1 byte string. */
  readonly values: readonly string[] | null;
  /** `pattern` and `format`, with the length bounds folded in; null: none (always null beside `values`). */
  readonly pattern: StringPattern | null;
}

export interface NumberNode {
  readonly kind: 'number';
  readonly id: number;
  /** Integers are written without a fraction or an exponent. */
  readonly integer: boolean;
  /** Inclusive bounds, integers only. */
  readonly minimum: bigint | undefined;
  readonly maximum: bigint | undefined;
  /** Bounds of a number that need not be an integer (json-number-bounds.ts); null: none. */
  readonly decimalBounds: DecimalBounds | null;
}

/** A JSON token written one way: `true`, `false`, `null`, or a number of an enum as JSON.stringify writes it. */
export interface TokenNode {
  readonly kind: 'token';
  readonly id: number;
  readonly bytes: Uint8Array;
}

/** Any of these values (flat: no option is itself an anyOf). */
export interface AnyOfNode {
  readonly kind: 'any-of';
  readonly id: number;
  readonly options: readonly Exclude<JsonNode, AnyOfNode>[];
}

export type JsonNode = ObjectNode | ArrayNode | StringNode | NumberNode | TokenNode | AnyOfNode;

/** A JSON value, after optional whitespace. */
export interface JsonValueNode {
  readonly kind: 'json';
  readonly id: number;
  readonly value: JsonNode;
}

/** Exactly these bytes. */
export interface TextNode {
  readonly kind: 'text';
  readonly id: number;
  readonly bytes: Uint8Array;
}

export interface SequenceNode {
  readonly kind: 'sequence';
  readonly id: number;
  readonly items: readonly GrammarNode[];
}

export interface AlternativesNode {
  readonly kind: 'alternatives';
  readonly id: number;
  readonly options: readonly GrammarNode[];
}

/** `item (separator item)*`, between `min` and `max` items. */
export interface RepeatNode {
  readonly kind: 'repeat';
  readonly id: number;
  readonly item: GrammarNode;
  /** The separator followed by the item: what one more item takes. */
  readonly more: GrammarNode;
  readonly min: number;
  readonly max: number;
}

/** Any bytes; once they end with `trigger`, `body` must follow, then free bytes again. */
export interface FreeTextNode {
  readonly kind: 'free-text';
  readonly id: number;
  readonly trigger: Uint8Array;
  /** Knuth–Morris–Pratt failure function of `trigger` (Knuth, Morris & Pratt 1977). */
  readonly fallback: Int32Array;
  readonly body: GrammarNode;
}

export type GrammarNode =
  | JsonValueNode
  | TextNode
  | SequenceNode
  | AlternativesNode
  | RepeatNode
  | FreeTextNode;

const encoder = new TextEncoder();

/** A string's UTF-8 bytes as a latin1 string (one char per byte): cheap to compare and slice. */
export function byteString(text: string): string {
  let out = '';
  for (const byte of encoder.encode(text)) out += String.fromCharCode(byte);
  return out;
}

export const objectNode = (fields: Omit<ObjectNode, 'kind' | 'id'>): ObjectNode => ({
  kind: 'object',
  id: id(),
  ...fields,
});
export const arrayNode = (fields: Omit<ArrayNode, 'kind' | 'id'>): ArrayNode => ({
  kind: 'array',
  id: id(),
  ...fields,
});
export const stringNode = (fields: Omit<StringNode, 'kind' | 'id'>): StringNode => ({
  kind: 'string',
  id: id(),
  ...fields,
});
export const numberNode = (fields: Omit<NumberNode, 'kind' | 'id'>): NumberNode => ({
  kind: 'number',
  id: id(),
  ...fields,
});
export const tokenNode = (text: string): TokenNode => ({
  kind: 'token',
  id: id(),
  bytes: encoder.encode(text),
});

/** One node for several options; a single option stands for itself. */
export function anyOfNode(options: readonly JsonNode[]): JsonNode {
  const flat = options.flatMap((option) => (option.kind === 'any-of' ? option.options : [option]));
  if (flat.length === 1) return flat[0] as JsonNode;
  return { kind: 'any-of', id: id(), options: flat };
}

export const jsonValue = (value: JsonNode): JsonValueNode => ({ kind: 'json', id: id(), value });
export const textNode = (text: string): TextNode => ({ kind: 'text', id: id(), bytes: encoder.encode(text) });

export function sequenceNode(items: readonly GrammarNode[]): GrammarNode {
  const kept = items.filter((item) => !(item.kind === 'text' && item.bytes.length === 0));
  if (kept.length === 1) return kept[0] as GrammarNode;
  return { kind: 'sequence', id: id(), items: kept };
}

export function alternativesNode(options: readonly GrammarNode[]): GrammarNode {
  if (options.length === 1) return options[0] as GrammarNode;
  return { kind: 'alternatives', id: id(), options };
}

export function repeatNode(item: GrammarNode, separator: string, min: number, max: number): RepeatNode {
  return { kind: 'repeat', id: id(), item, more: sequenceNode([textNode(separator), item]), min, max };
}

export function freeTextNode(trigger: string, body: GrammarNode): FreeTextNode {
  const bytes = encoder.encode(trigger);
  const fallback = new Int32Array(bytes.length);
  for (let i = 1, k = 0; i < bytes.length; i++) {
    while (k > 0 && bytes[i] !== bytes[k]) k = fallback[k - 1] as number;
    if (bytes[i] === bytes[k]) k++;
    fallback[i] = k;
  }
  return { kind: 'free-text', id: id(), trigger: bytes, fallback, body };
}
