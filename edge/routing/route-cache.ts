// The route table of one edge process: what a policy or version name resolved to (the version and the
// model it is served as, or nothing), kept `ttlMs` after it was read. routeNamed (resolve-route.ts)
// reads through it, so a proxied call naming a model, and a trajectory or rollout naming a policy,
// need no store query while the entry is fresh.
//
// Invalidation is by age alone: the writes that change a name's route (`edgerl ab promote`,
// `edgerl ab rollback`, setDefaultVersion, publishing or retiring a version) run in other processes,
// so an entry is read again once it is `ttlMs` old. That is the bound: such a change reaches this
// edge's new traffic within `ttlMs` (routeCacheMs by default). A route a trajectory or group recorded
// is not cached here; it is read back from its row (route.ts). Only settled values are kept, never a
// pending lookup: in a Worker, one request must not wait on a promise another request's I/O owns.
import type { PolicyVersion } from '../../db/schema/policies.ts';

/** How long a resolved name is reused: the longest a promote, rollback or retirement waits to reach an edge. */
export const routeCacheMs = 2_000;

/** Names kept at most; a name beyond it evicts the oldest (names are few: policies and versions). */
const maxNames = 1024;

export interface NamedVersion {
  readonly version: PolicyVersion;
  /** The model the version is served as (served-model.ts). */
  readonly model: string;
}

interface Entry {
  readonly named: NamedVersion | undefined;
  readonly readAt: number;
}

export class RouteCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  /** `ttlMs` 0 keeps nothing (every lookup reads the store). */
  constructor(ttlMs: number = routeCacheMs, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The name's entry while it is fresh; otherwise `load`'s answer, kept from now on. */
  async lookup(
    name: string,
    load: () => Promise<NamedVersion | undefined>,
  ): Promise<NamedVersion | undefined> {
    const entry = this.#entries.get(name);
    if (entry && this.#now() - entry.readAt < this.#ttlMs) return entry.named;
    const readAt = this.#now();
    const named = await load();
    if (this.#ttlMs > 0) {
      this.#entries.delete(name);
      this.#entries.set(name, { named, readAt });
      if (this.#entries.size > maxNames) this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return named;
  }

  /** Forgets every name (the next lookup of each reads the store). */
  clear(): void {
    this.#entries.clear();
  }
}
