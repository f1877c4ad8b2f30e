// Where RULER keeps finished judgings so that scoring the same group again costs nothing: an interface
// keyed by the group hash (group-hash.ts), plus an in-memory implementation. A store-backed cache is an
// adapter over the trajectory store. Only `scored` results are cached; failures are retried next time.
import type { ScoredGroup } from './score-group-result.ts';

export interface RulerCache {
  get(groupHash: string): Promise<ScoredGroup | undefined>;
  set(groupHash: string, result: ScoredGroup): Promise<void>;
}

/** An unbounded in-process cache holding copies, as a real store would; `size` is there for tests and logs. */
export function createMemoryRulerCache(): RulerCache & { readonly size: number } {
  const entries = new Map<string, ScoredGroup>();
  return {
    get size() {
      return entries.size;
    },
    async get(groupHash) {
      const entry = entries.get(groupHash);
      return entry && structuredClone(entry);
    },
    async set(groupHash, result) {
      entries.set(groupHash, structuredClone(result));
    },
  };
}
