// The docs a process config attaches to each zod field (meaning and unit, the default's source, its
// flag and environment variable), the walk that lists a config's fields with their defaults, and the
// issue lines that name a field by its flag. Reading argv and printing usage are the CLI's (cli/flags/).
import { z } from 'zod';

export interface FieldDoc {
  /** One line: what the value means, with its unit. */
  readonly doc: string;
  /** Where the default comes from (a paper, a library's default, an edgerl choice). */
  readonly source?: string;
  /** The default as the usage text shows it, for a default derived from other fields. */
  readonly shownDefault?: string;
  /** The usage text's line for the flag, where it says more than `doc` (a flag without a value). */
  readonly flagDoc?: string;
  /** The command-line flag, without its dashes. */
  readonly flag?: string;
  /** The value's placeholder in the usage text (N, X, DIR); none for a flag without a value. */
  readonly arg?: string;
  /** For a flag without a value: what it sets the field to. */
  readonly sets?: string | number | boolean;
  /**
   * The flag may be given more than once (`--inference-url A --inference-url B`); the field then
   * receives every value as a list of strings (its environment variable, one string).
   */
  readonly repeatable?: boolean;
  /** The environment variable read when the flag is absent. */
  readonly env?: string;
  /** The usage text's heading this field is listed under. */
  readonly section?: string;
}

/** Every config's field docs; a field is documented by registering its (defaulted) schema here. */
export const fieldDocs = z.registry<FieldDoc>();

/** Registers `doc` for `schema` and returns the schema, for writing the doc beside the field. */
export function documented<T extends z.core.$ZodType>(schema: T, doc: FieldDoc): T {
  fieldDocs.add(schema as unknown as z.ZodType, doc);
  return schema;
}

export type LeafKind = 'number' | 'string' | 'boolean' | 'list' | 'choice';

export interface ConfigField {
  readonly path: readonly string[];
  readonly doc: FieldDoc;
  readonly kind: LeafKind;
  /** The written default, or undefined when the field has none (or a derived one). */
  readonly defaultValue: unknown;
  /** A choice's allowed values. */
  readonly choices?: readonly string[];
}

type AnySchema = z.core.$ZodType;

/** The documented fields of a config schema, depth first in declaration order. */
export function configFields(schema: AnySchema, prefix: readonly string[] = []): ConfigField[] {
  const object = innerObject(schema);
  if (!object) return [];
  const fields: ConfigField[] = [];
  for (const [key, field] of Object.entries(object._zod.def.shape)) {
    const path = [...prefix, key];
    const doc = fieldDocs.get(field as z.ZodType);
    if (doc) {
      const base = unwrap(field);
      const choices = base._zod.def.type === 'enum' ? enumValues(base) : undefined;
      fields.push({
        path,
        doc,
        kind: leafKind(base),
        defaultValue: defaultOf(field),
        ...(choices ? { choices } : {}),
      });
    } else {
      fields.push(...configFields(field, path));
    }
  }
  return fields;
}

/**
 * One line per zod issue, naming the field by its flag (`--lora-rank must be …`) where it has one and
 * `labels` is 'flag', else by its dotted path; an issue without a path is a whole sentence already.
 */
export function issueLines(error: z.ZodError, schema: AnySchema, labels: 'flag' | 'path' = 'flag'): string[] {
  const fields = configFields(schema);
  return error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const where = issue.path.length > 0 ? ` in ${issue.path.join('.')}` : '';
      return issue.keys.map((key) => `unknown setting "${key}"${where}`).join('; ');
    }
    if (issue.path.length === 0) return issue.message;
    const path = issue.path.map(String);
    const field = fields.find((candidate) => candidate.path.join('.') === path.join('.'));
    // A flag without a value (`--sft`) sets the field; the value at fault is the field's, not the flag's.
    const byFlag = labels === 'flag' && field?.doc.flag !== undefined && field.doc.arg !== undefined;
    const label = byFlag ? `--${field?.doc.flag}` : path.join('.');
    return `${label} ${issue.message}`;
  });
}

/** Parses `input`, or throws `fail(issues)` with one line per problem (see `issueLines`). */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  input: unknown,
  fail: (issues: string[]) => Error,
  labels: 'flag' | 'path' = 'flag',
): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw fail(issueLines(parsed.error, schema, labels));
  return parsed.data;
}

function innerObject(schema: AnySchema): z.core.$ZodObject | undefined {
  const base = unwrap(schema);
  return base._zod.def.type === 'object' ? (base as z.core.$ZodObject) : undefined;
}

/** The schema under defaults, optionals, nullables and transforms. */
function unwrap(schema: AnySchema): AnySchema {
  const def = schema._zod.def as { type: string; innerType?: AnySchema; in?: AnySchema };
  if (def.innerType) return unwrap(def.innerType);
  if (def.type === 'pipe' && def.in) return unwrap(def.in);
  return schema;
}

function defaultOf(schema: AnySchema): unknown {
  const def = schema._zod.def as { type: string; innerType?: AnySchema; defaultValue?: unknown };
  if (def.type === 'default') return def.defaultValue;
  return def.innerType ? defaultOf(def.innerType) : undefined;
}

function leafKind(base: AnySchema): LeafKind {
  const def = base._zod.def as { type: string; options?: AnySchema[] };
  switch (def.type) {
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return 'list';
    case 'enum':
      return 'choice';
    case 'union':
      return (def.options ?? []).some((option) => unwrap(option)._zod.def.type === 'number')
        ? 'number'
        : 'string';
    default:
      return 'string';
  }
}

function enumValues(base: AnySchema): string[] {
  return Object.values((base._zod.def as unknown as { entries: Record<string, string> }).entries);
}
