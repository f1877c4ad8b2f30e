// Validation at the store's boundary: parse with zod or throw a `validation` StoreError whose message
// names every offending field (`turn: completionLogprobs: must have one logprob per …`).
import { formatIssues } from '../../protocol/format-issues.ts';
import type { z } from 'zod';
import { StoreError } from '../errors.ts';

export function parseInput<Schema extends z.ZodType>(
  schema: Schema,
  input: unknown,
  what: string,
): z.output<Schema> {
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new StoreError('validation', `${what}: ${formatIssues(result.error)}`, {
      issues: result.error.issues,
    });
  }
  return result.data;
}
