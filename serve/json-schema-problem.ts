// What the schema compiler (json-schema-grammar.ts) and its string constraints (json-string-constraints.ts)
// share: a schema object, the keywords that only annotate, and a problem at a path inside the schema,
// which compileJsonSchema turns into a 400.

/** Keywords that describe and never constrain (JSON Schema's meta-data and core vocabularies). */
export const annotations = new Set([
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$schema',
  '$id',
  '$comment',
  '$anchor',
  // Definitions only matter through `$ref`, which is refused.
  '$defs',
  'definitions',
]);

export type Schema = Record<string, unknown>;

/** A schema's problem at a path inside it; compileJsonSchema turns it into a 400. */
export class SchemaProblem extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

export const isObject = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
