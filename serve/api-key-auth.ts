// Optional bearer-token check for the /v1 routes, as vLLM's --api-key: `Authorization: Bearer <key>`
// must match; /health stays open for probes. Compared in constant time so the key cannot be guessed
// byte by byte from response timings.
import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { ServeError } from './serve-error.ts';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function apiKeyAuth(apiKey: string): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (!match || !sameSecret(match[1] as string, apiKey)) {
      throw new ServeError('unauthorized', 'Unauthorized: send the API key as "Authorization: Bearer <key>"');
    }
    await next();
  };
}
