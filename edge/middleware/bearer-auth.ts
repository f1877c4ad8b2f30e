// Bearer-token authentication (RFC 6750) against a list of API keys. Keys are compared by their
// SHA-256 digests in constant time, so neither the key length nor a matching prefix leaks through
// timing. A missing or wrong key is a 401 with a `WWW-Authenticate` challenge. The digest is the
// synchronous one (protocol/sha256.ts): Web Crypto's is a thread-pool job per request in Node.
import type { MiddlewareHandler } from 'hono';
import { sha256 } from '../../protocol/sha256.ts';
import { ApiError } from '../http/api-error.ts';

export interface BearerAuthOptions {
  /** Accepted keys; at least one (an edge without keys would be open to anyone). */
  readonly keys: readonly string[];
}

export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler {
  if (options.keys.length === 0 || options.keys.some((key) => key.length === 0)) {
    throw new Error('bearerAuth needs at least one non-empty API key');
  }
  const digests = options.keys.map(digest);
  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match) {
      c.header('WWW-Authenticate', 'Bearer realm="edgerl"');
      throw new ApiError('unauthorized', 'authorization: send "Authorization: Bearer <API key>"');
    }
    const presented = digest(match[1] as string);
    let ok = false;
    for (const known of digests) ok = equalBytes(known, presented) || ok;
    if (!ok) {
      c.header('WWW-Authenticate', 'Bearer realm="edgerl", error="invalid_token"');
      throw new ApiError('unauthorized', 'authorization: the API key is not valid');
    }
    await next();
  };
}

function digest(text: string): Uint8Array {
  return sha256(new TextEncoder().encode(text));
}

/** Constant time for equal lengths (digests always are). */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}
