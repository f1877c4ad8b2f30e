// Reads a JSON request body and validates it with a zod schema; any problem is a 400 that names the
// field (the first issue's path), so a client can tell which part of its request to fix.
import type { Context } from 'hono';
import type { z } from 'zod';
import { ApiError, invalidField } from './api-error.ts';

export async function parseBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.output<T>> {
  let json: unknown;
  try {
    const text = await c.req.text();
    json = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new ApiError('invalid-request', 'body: not valid JSON', { field: 'body', cause: error });
  }
  return parseValue(schema, json, 'body');
}

/** Validates any value; `where` names the whole value when the issue has no path (`body`, `query`). */
export function parseValue<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  // An unknown key is reported on its parent; name the key itself.
  const path =
    issue?.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : (issue?.path ?? []);
  const field = path.length > 0 ? path.join('.') : where;
  throw invalidField(
    field,
    issue?.code === 'unrecognized_keys' ? 'unknown field' : (issue?.message ?? 'invalid'),
  );
}
