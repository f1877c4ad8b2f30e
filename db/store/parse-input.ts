// Validation at the store's boundary: parse with zod or throw a `validation` StoreError whose message
// names every offending field (`turn: completionLogprobs: must have one logprob per …`). Before zod,
// the raw input is checked for what Postgres cannot store (deep nesting, NUL, lone surrogates), except
// in the fields a caller keeps (the store escapes those: protocol/stored-text.ts).
import { formatIssues } from '../../protocol/format-issues.ts';
import {
  findUnstorable,
  type Unstorable,
  unstorablePath,
  unstorableMessages,
} from '../../protocol/unstorable-json.ts';
import type { z } from 'zod';
import { StoreError } from '../errors.ts';

export interface ParseInputOptions {
  /** Top-level fields whose NULs and lone surrogates are stored (escaped) rather than refused. */
  readonly keepText?: readonly string[];
}

export function parseInput<Schema extends z.ZodType>(
  schema: Schema,
  input: unknown,
  what: string,
  options: ParseInputOptions = {},
): z.output<Schema> {
  // First: zod's recursive schemas (z.json()) would overflow the stack on a value nested 20,000 deep,
  // and Postgres's own refusal of NUL would echo its message and name no field.
  const unstorable = findRefused(input, options.keepText ?? []);
  if (unstorable) {
    const path = unstorablePath(unstorable);
    const message = unstorableMessages[unstorable.problem];
    throw new StoreError(
      'validation',
      `${what}: ${path.length > 0 ? path.join('.') : '(root)'}: ${message}`,
      {
        issues: [{ code: 'custom', path: [...path], message, input: undefined }],
      },
    );
  }
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new StoreError('validation', `${what}: ${formatIssues(result.error)}`, {
      issues: result.error.issues,
    });
  }
  return result.data;
}

/** Depth everywhere; text everywhere but inside the kept top-level fields. */
function findRefused(input: unknown, keepText: readonly string[]): Unstorable | undefined {
  if (keepText.length === 0 || typeof input !== 'object' || input === null || Array.isArray(input)) {
    return findUnstorable(input);
  }
  const tooDeep = findUnstorable(input, { text: false });
  if (tooDeep) return tooDeep;
  for (const [key, value] of Object.entries(input)) {
    if (keepText.includes(key)) continue;
    const found = findUnstorable({ [key]: value });
    if (found) return found;
  }
  return undefined;
}
