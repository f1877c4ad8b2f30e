// zod field builders for process configs whose messages say what was expected and what came:
// `must be an integer between 1 and 4096, got 0`. The field's name is added by `issueLines`.
import { z } from 'zod';

const shown = (value: unknown) => (typeof value === 'string' ? `"${value}"` : String(value));

/** A number (Infinity allowed, NaN not) that passes `test`; `expected` completes "must be …". */
export function numberWhere(test: (value: number) => boolean, expected: string) {
  const message = (issue: { input: unknown }) => `must be ${expected}, got ${shown(issue.input)}`;
  return z
    .union([z.number(), z.literal(Number.POSITIVE_INFINITY), z.literal(Number.NEGATIVE_INFINITY)], {
      error: message,
    })
    .refine(test, { error: message });
}

export const intBetween = (min: number, max: number) =>
  numberWhere(
    (value) => Number.isInteger(value) && value >= min && value <= max,
    `an integer between ${min} and ${max}`,
  );

export const finiteNumber = () => numberWhere(Number.isFinite, 'a finite number');

/** One of a closed list of names; the message lists them. */
export function oneOf<const T extends readonly [string, ...string[]]>(names: T) {
  return z.enum(names, { error: (issue) => `must be one of ${names.join(', ')}, got ${shown(issue.input)}` });
}
