// The one place a presented API key is checked against the known ones (the edge's bearer keys, the
// console's sign-in, serve-model's --api-key). Keys are compared as SHA-256 digests, every known key
// every time, with no early exit, so timing reveals neither the key's length nor a matching prefix
// nor which key matched. Sync SHA-256 (protocol/sha256.ts): Worker-safe, no thread-pool job per check.
// Leaves out rate limiting (guess-limiter.ts) and where the key came from (a header, a form).
import { type ApiScope, apiScopes, type ScopedKeys } from './api-scope.ts';
import { sha256 } from './sha256.ts';

export interface KeyMatch {
  /** The known key that matched (the console signs its session cookie with it). */
  readonly key: string;
  /** Every scope the key was configured under. */
  readonly scopes: readonly ApiScope[];
}

interface Entry extends KeyMatch {
  readonly digest: Uint8Array;
}

const encoder = new TextEncoder();

export class KeyRing {
  readonly #entries: readonly Entry[];

  /** Keys by scope; empty keys are ignored, and a key listed under several scopes holds them all. */
  constructor(keys: Partial<ScopedKeys>) {
    const scopesOf = new Map<string, ApiScope[]>();
    for (const scope of apiScopes) {
      for (const key of keys[scope] ?? []) {
        if (key.length === 0) continue;
        const held = scopesOf.get(key) ?? [];
        if (!held.includes(scope)) held.push(scope);
        scopesOf.set(key, held);
      }
    }
    this.#entries = [...scopesOf].map(([key, scopes]) => ({ key, scopes, digest: digest(key) }));
  }

  /** How many distinct keys the ring holds. */
  get size(): number {
    return this.#entries.length;
  }

  /** The keys holding `scope` itself (not through another): what the console signs sessions with. */
  keysWith(scope: ApiScope): readonly string[] {
    return this.#entries.filter((entry) => entry.scopes.includes(scope)).map((entry) => entry.key);
  }

  /** The known key equal to `presented`, in time that depends only on the number of known keys. */
  match(presented: string): KeyMatch | undefined {
    const wanted = digest(presented);
    let found: Entry | undefined;
    for (const entry of this.#entries) {
      if (equalBytes(entry.digest, wanted) && found === undefined) found = entry;
    }
    return found ? { key: found.key, scopes: found.scopes } : undefined;
  }
}

function digest(text: string): Uint8Array {
  return sha256(encoder.encode(text));
}

/** Constant time for equal lengths; digests always are, so only `a`'s length (32) could ever show. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}
