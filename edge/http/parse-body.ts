// Reads a JSON request body and validates it with a zod schema; any problem is a 400 that names the
// field (the first issue's path) and says what to send there (protocol/issue-message.ts), so a client
// can tell which part of its request to fix and how. A body nested deeper than maxJsonDepth is refused
// before any schema (zod's recursive ones would overflow the stack), and a body that is not UTF-8
// before any of that, with the offset of its first bad byte.
import type { Context } from 'hono';
import type { z } from 'zod';
import { decodeUtf8, Utf8Error } from '../../protocol/decode-utf8.ts';
import { issueMessage } from '../../protocol/issue-message.ts';
import { findUnstorable, maxJsonDepth, unstorablePath } from '../../protocol/unstorable-json.ts';
import { ApiError, invalidField } from './api-error.ts';

export async function parseBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.output<T>> {
  return parseValue(schema, (await readJson(c)).json, 'body');
}

/**
 * The body as JSON (an empty body is `{}`), refused when not UTF-8 (`body: invalid UTF-8 at byte N`),
 * not JSON or nested too deep; and its size in bytes.
 */
export async function readJsonBody(c: Context): Promise<{ json: unknown; bytes: number }> {
  return readJson(c);
}

async function readJson(c: Context): Promise<{ json: unknown; bytes: number }> {
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  let text: string;
  try {
    // Strict: a malformed byte is refused where it is, not stored as U+FFFD (decode-utf8.ts).
    text = decodeUtf8(bytes);
  } catch (error) {
    if (!(error instanceof Utf8Error)) throw error;
    throw new ApiError('invalid-request', `body: ${error.message}`, { field: 'body', cause: error });
  }
  let json: unknown;
  try {
    json = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new ApiError('invalid-request', 'body: not valid JSON', { field: 'body', cause: error });
  }
  refuseTooDeep(json);
  return { json, bytes: bytes.byteLength };
}

/** Only depth here: text Postgres cannot hold is the store's to refuse (or keep), with the field named. */
function refuseTooDeep(json: unknown): void {
  const found = findUnstorable(json, { text: false });
  if (!found) return;
  const path = unstorablePath(found);
  throw invalidField(path.length > 0 ? path.join('.') : 'body', `nested deeper than ${maxJsonDepth} levels`);
}

/** Validates any value; `where` names the whole value when the issue has no path (`body`, `query`). */
export function parseValue<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (!issue) throw invalidField(where, 'invalid');
  // In words that say what to send (an unknown key named itself, a union's mismatch where it is).
  const { path, message } = issueMessage(issue, value);
  throw invalidField(path.length > 0 ? path.join('.') : where, message);
}
