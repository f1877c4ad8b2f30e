// Bearer-token authentication (RFC 6750) against the edge's key ring (protocol/key-ring.ts: SHA-256
// digests compared in constant time), with wrong keys counted per client by the guess limiter: a
// client over its limit gets 429 with Retry-After, even with a right key. A missing key is a 401 that
// counts as no guess; a wrong one is a 401 that does; a right admin key clears the client's count.
// Sets the key's scopes for requireScope.
import type { Context, MiddlewareHandler } from 'hono';
import { checkBearer } from '../../protocol/check-bearer.ts';
import type { GuessLimiter } from '../../protocol/guess-limiter.ts';
import type { KeyRing } from '../../protocol/key-ring.ts';
import type { EdgeEnv } from '../app-env.ts';
import { ApiError } from '../http/api-error.ts';

export interface BearerAuthOptions {
  /** Accepted keys; at least one (an edge without keys would be open to anyone). */
  readonly keys: KeyRing;
  readonly limiter: GuessLimiter;
  /** The request's client address (protocol/client-address.ts), as the runtime knows it. */
  readonly clientAddress: (c: Context) => string;
}

export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler<EdgeEnv> {
  if (options.keys.size === 0) throw new Error('bearerAuth needs at least one non-empty API key');
  const { keys, limiter } = options;
  return async (c, next) => {
    const verdict = checkBearer({
      header: c.req.header('authorization'),
      client: options.clientAddress(c),
      route: `${c.req.method} ${c.req.path}`,
      keys,
      limiter,
    });
    switch (verdict.kind) {
      case 'blocked':
        c.header('Retry-After', String(verdict.retryAfterSeconds));
        throw new ApiError(
          'too-many-requests',
          `too many wrong API keys from this address; retry after ${verdict.retryAfterSeconds} s`,
        );
      case 'missing':
        c.header('WWW-Authenticate', 'Bearer realm="edgerl"');
        throw new ApiError('unauthorized', 'authorization: send "Authorization: Bearer <API key>"');
      case 'wrong':
        c.header('WWW-Authenticate', 'Bearer realm="edgerl", error="invalid_token"');
        throw new ApiError('unauthorized', 'authorization: the API key is not valid');
      case 'ok':
        c.set('scopes', verdict.scopes);
    }
    await next();
  };
}
