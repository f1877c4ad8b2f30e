// The one bearer-key check of every server edgerl runs (the edge's /v1 and serve-model): the guess
// limiter first, so a blocked client is refused even with a right key; then the header (RFC 6750);
// then the key ring. A missing key counts as no guess, a wrong one does, and only an admin key clears
// the client's count (a lesser key's holder could otherwise reset it between guesses at an admin
// key). Returns a tagged verdict each runtime turns into its own error shape. Worker-safe.
import type { ApiScope } from './api-scope.ts';
import type { GuessLimiter } from './guess-limiter.ts';
import type { KeyRing } from './key-ring.ts';

export type BearerVerdict =
  | { readonly kind: 'blocked'; readonly retryAfterSeconds: number }
  | { readonly kind: 'missing' }
  | { readonly kind: 'wrong' }
  | { readonly kind: 'ok'; readonly scopes: readonly ApiScope[] };

export interface BearerCheck {
  /** The Authorization header as sent (absent: none). */
  readonly header: string | undefined;
  /** The client address the limiter counts by (protocol/client-address.ts). */
  readonly client: string;
  /** What the log line names: method and path, never the key. */
  readonly route: string;
  readonly keys: KeyRing;
  readonly limiter: GuessLimiter;
}

export function checkBearer(check: BearerCheck): BearerVerdict {
  const { client, keys, limiter } = check;
  const verdict = limiter.check(client);
  if (!verdict.allowed) return { kind: 'blocked', retryAfterSeconds: verdict.retryAfterSeconds };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(check.header?.trim() ?? '');
  if (!match) return { kind: 'missing' };
  const found = keys.match(match[1] as string);
  if (!found) {
    limiter.fail(client, check.route);
    return { kind: 'wrong' };
  }
  if (found.scopes.includes('admin')) limiter.succeed(client);
  return { kind: 'ok', scopes: found.scopes };
}
