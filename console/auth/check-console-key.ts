// One presented key against the console's ring (protocol/key-ring.ts), through the guess limiter:
// what both sign-in and a bearer request ask. The console needs the admin scope; a valid key without
// it is refused by name of the scope, and does not clear the client's wrong-key count (or its holder
// could reset the count between guesses at an admin key).
import type { GuessLimiter } from '../../protocol/guess-limiter.ts';
import type { KeyRing } from '../../protocol/key-ring.ts';

export type ConsoleKeyCheck =
  | { readonly kind: 'admin'; readonly key: string }
  | { readonly kind: 'blocked'; readonly retryAfterSeconds: number }
  | { readonly kind: 'wrong' }
  | { readonly kind: 'not-admin' };

export interface ConsoleKeyCheckInput {
  readonly keys: KeyRing;
  readonly limiter: GuessLimiter;
  readonly client: string;
  /** The path, for the limiter's log line (never the key). */
  readonly route: string;
  readonly presented: string;
}

export function checkConsoleKey(input: ConsoleKeyCheckInput): ConsoleKeyCheck {
  const verdict = input.limiter.check(input.client);
  if (!verdict.allowed) return { kind: 'blocked', retryAfterSeconds: verdict.retryAfterSeconds };
  // An empty form is no guess: refused, not counted.
  if (!input.presented) return { kind: 'wrong' };
  const found = input.keys.match(input.presented);
  if (!found) {
    input.limiter.fail(input.client, input.route);
    return { kind: 'wrong' };
  }
  if (!found.scopes.includes('admin')) return { kind: 'not-admin' };
  input.limiter.succeed(input.client);
  return { kind: 'admin', key: found.key };
}

/** What a refused console request is told: the scope it needs, never the key. */
export const adminScopeNeeded =
  'the console needs an API key with the admin scope (one of EDGERL_EDGE_API_KEYS); this key holds only record or rollout';
