// Validation at the store's boundary: parse with zod or throw a `validation` StoreError whose message
// names every offending field (`turn: completionLogprobs: must have one logprob per …`). Before zod,
// the raw input is checked for what Postgres cannot store (deep nesting, NUL, lone surrogates).
import { formatIssues } from '../../protocol/format-issues.ts';
import { findUnstorable, unstorablePath, unstorableMessages } from '../../protocol/unstorable-json.ts';
import type { z } from 'zod';
import { StoreError } from '../errors.ts';

export function parseInput<Schema extends z.ZodType>(
  schema: Schema,
  input: unknown,
  what: string,
): z.output<Schema> {
  // First: zod's recursive schemas (z.json()) would overflow the stack on a value nested 20,000 deep,
  // and Postgres's own refusal of NUL would echo its message and name no field.
  const unstorable = findUnstorable(input);
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
