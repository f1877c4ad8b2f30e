// Optional bearer-token check for the /v1 routes, as vLLM's --api-key: `Authorization: Bearer <key>`
// must match; /health stays open for probes. The key is checked by protocol/key-ring.ts (SHA-256
// digests in constant time: no length or prefix shows in timings), and wrong keys are counted per
// client address by the guess limiter (429 with Retry-After once over). The address is the socket's
// peer: serve-model trusts no forwarded header (put it behind nothing, or behind the edge).
import type { Context, MiddlewareHandler } from 'hono';
import { checkBearer } from '../protocol/check-bearer.ts';
import { clientAddress, nodePeerAddress } from '../protocol/client-address.ts';
import type { GuessLimiter } from '../protocol/guess-limiter.ts';
import { KeyRing } from '../protocol/key-ring.ts';
import { ServeError } from './serve-error.ts';

export interface ApiKeyAuthOptions {
  readonly apiKey: string;
  readonly limiter: GuessLimiter;
}

function addressOf(c: Context): string {
  return clientAddress({ remote: nodePeerAddress(c.env), forwardedFor: undefined, trustedProxies: 0 });
}

export function apiKeyAuth(options: ApiKeyAuthOptions): MiddlewareHandler {
  // serve-model has one key, with every right there is.
  const keys = new KeyRing({ admin: [options.apiKey] });
  return async (c, next) => {
    const verdict = checkBearer({
      header: c.req.header('authorization'),
      client: addressOf(c),
      route: `${c.req.method} ${c.req.path}`,
      keys,
      limiter: options.limiter,
    });
    switch (verdict.kind) {
      case 'blocked':
        c.header('Retry-After', String(verdict.retryAfterSeconds));
        throw new ServeError(
          'too-many-requests',
          `Too many wrong API keys from this address; retry after ${verdict.retryAfterSeconds} s`,
        );
      case 'missing':
      case 'wrong':
        throw new ServeError(
          'unauthorized',
          'Unauthorized: send the API key as "Authorization: Bearer <key>"',
        );
      case 'ok':
    }
    await next();
  };
}
