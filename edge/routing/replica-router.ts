// Which inference replicas of the fleet a request for a model may go to, and in what order. A
// trained version's adapter goes only to the replicas whose `publications` row is `ready` (the store's
// servingReplicas); a name the store knows no adapter by (a base model) goes to every replica. The
// answer is kept `cacheMs` per model, so routing costs one store read per model per interval.
// Among the holders, requests rotate (round robin); a replica that just refused connections goes
// last for a while, and one that answered 404 for a version it was `ready` for is quarantined for
// that version in the store (it restarted and lost it; catch-up reloads it). Shared by the episode
// loop's policy client (fleet-policy-client.ts) and the recording proxy (fleet-fetch.ts). fetch-free.
import type { Store } from '../../db/store.ts';
import { replicaName } from '../../protocol/replica-url.ts';

export interface FleetSettings {
  /** The replicas' OpenAI base URLs up to /v1, as the trainer publishes to them. */
  readonly replicas: readonly string[];
  /** How long one model's replicas, read from the store, are reused (ms). */
  readonly cacheMs: number;
  /** How long a replica that refused connections is tried last (ms); default `defaultDownMs`. */
  readonly downMs?: number;
}

/** The replicas to try for one request, best first; empty when no replica holds the version. */
export interface ReplicaChoice {
  /** Set for a trained version: its id (the row a lost replica is quarantined on). */
  readonly versionId?: string;
  readonly replicas: readonly string[];
}

/** A router bound to the store of one request (or one Worker batch, or the Node edge's one store). */
export interface ReplicaPicker {
  choose(model: string): Promise<ReplicaChoice>;
  /** The replica refused the connection or dropped it: try it last for a while. */
  unreachable(replica: string): void;
  /** The replica answered 404 for a version it was ready for: quarantine it there, in the store. */
  lost(choice: ReplicaChoice, replica: string, reason: string): Promise<void>;
}

/**
 * How long a replica that refused connections is tried last, ms: long enough not to spend every
 * request's first attempt on a dead replica, short enough that a restarted one takes traffic again
 * soon (an edgerl choice, of the order of a process restart).
 */
export const defaultDownMs = 5_000;

export class ReplicaRouter {
  readonly settings: FleetSettings;
  readonly #now: () => number;
  readonly #fleet: readonly string[];
  readonly #cache = new Map<string, { readonly at: number; readonly choice: ReplicaChoice }>();
  readonly #down = new Map<string, number>();
  #turn = 0;

  constructor(settings: FleetSettings, now: () => number = () => Date.now()) {
    this.settings = settings;
    this.#now = now;
    this.#fleet = settings.replicas.map(replicaName);
  }

  /** Every replica this edge routes to, in configured order. */
  get replicas(): readonly string[] {
    return this.#fleet;
  }

  forStore(store: Store): ReplicaPicker {
    return {
      choose: (model) => this.#choose(store, model),
      unreachable: (replica) => {
        this.#down.set(replica, this.#now());
      },
      lost: async (choice, replica, reason) => {
        this.#cache.clear();
        if (!choice.versionId) return;
        await store.recordPublication({
          versionId: choice.versionId,
          replica,
          state: 'quarantined',
          error: `edge: ${reason}`.slice(0, 2000),
        });
      },
    };
  }

  async #choose(store: Store, model: string): Promise<ReplicaChoice> {
    const now = this.#now();
    const cached = this.#cache.get(model);
    let holders: ReplicaChoice;
    if (cached && now - cached.at < this.settings.cacheMs) {
      holders = cached.choice;
    } else {
      holders = await this.#holders(store, model);
      this.#cache.set(model, { at: now, choice: holders });
    }
    return { ...holders, replicas: this.#order(holders.replicas, now) };
  }

  async #holders(store: Store, model: string): Promise<ReplicaChoice> {
    const serving = await store.servingReplicas(model);
    if (serving.kind === 'any') return { replicas: this.#fleet };
    const ready = new Set(serving.ready);
    // Fleet order, and only this edge's replicas: a row may name a replica since removed from the list.
    return { versionId: serving.versionId, replicas: this.#fleet.filter((replica) => ready.has(replica)) };
  }

  /** Rotated by one per request; replicas that refused connections lately go last. */
  #order(replicas: readonly string[], now: number): string[] {
    if (replicas.length === 0) return [];
    const start = this.#turn++ % replicas.length;
    const rotated = [...replicas.slice(start), ...replicas.slice(0, start)];
    const isDown = (replica: string) => {
      const at = this.#down.get(replica);
      return at !== undefined && now - at < (this.settings.downMs ?? defaultDownMs);
    };
    return [...rotated.filter((replica) => !isDown(replica)), ...rotated.filter(isDown)];
  }
}
