// Caps request bodies (Hono's bodyLimit, which checks Content-Length and counts streamed bytes), with
// the edge's JSON error instead of Hono's plain-text one. A body with a Content-Length (and no
// Transfer-Encoding) is judged by the header alone, before Hono's middleware: the server's HTTP parser
// reads no more bytes than it declares, and not touching the request's body stream here leaves
// @hono/node-server its fast path of reading the body straight from the socket (Hono's own check asks
// for the stream first, which builds a full Request per call).
import type { MiddlewareHandler } from 'hono';
import { bodyLimit as honoBodyLimit } from 'hono/body-limit';
import { ApiError } from '../http/api-error.ts';

export function bodyLimit(maxBytes: number): MiddlewareHandler {
  if (!(Number.isInteger(maxBytes) && maxBytes > 0))
    throw new Error(`bodyLimit: maxBytes must be a positive integer, got ${maxBytes}`);
  const tooLarge = () => {
    throw new ApiError('payload-too-large', `body: larger than the limit of ${maxBytes} bytes`, {
      field: 'body',
    });
  };
  const counted = honoBodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined && /^\d+$/.test(declared)) {
      if (Number(declared) > maxBytes) tooLarge();
      return next();
    }
    return counted(c, next);
  };
}
