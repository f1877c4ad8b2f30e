// Caps request bodies (Hono's bodyLimit, which checks Content-Length and counts streamed bytes), with
// the edge's JSON error instead of Hono's plain-text one.
import type { MiddlewareHandler } from 'hono';
import { bodyLimit as honoBodyLimit } from 'hono/body-limit';
import { ApiError } from '../http/api-error.ts';

export function bodyLimit(maxBytes: number): MiddlewareHandler {
  if (!(Number.isInteger(maxBytes) && maxBytes > 0))
    throw new Error(`bodyLimit: maxBytes must be a positive integer, got ${maxBytes}`);
  return honoBodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError('payload-too-large', `body: larger than the limit of ${maxBytes} bytes`, {
        field: 'body',
      });
    },
  });
}
