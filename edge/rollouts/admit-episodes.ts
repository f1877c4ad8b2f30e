// Admission for new rollout episodes: a group is refused (429 with Retry-After) when this edge's
// in-process queue or its policy's episodes in flight would pass their bound. Both bounds are
// settings (edge-config.ts EDGE_MAX_QUEUED_EPISODES, POLICY_MAX_QUEUED_EPISODES). The bounds are soft
// under concurrency: two requests checked at once may both pass and go over by one group each.
// A group is always admitted when nothing is queued, so one larger than the bound can still run.
import type { Store } from '../../db/store.ts';
import type { Route } from '../routing/route.ts';

export interface AdmissionLimits {
  /** Episodes waiting in this edge's queue (Node's in-process queue) above which new groups are refused. */
  readonly maxQueuedPerEdge: number;
  /** A policy's rollout episodes queued or running (in the store, all edges) above which groups are refused. */
  readonly maxQueuedPerPolicy: number;
}

/** What this edge's queue holds now (Node); a Worker has none (its Queue is Cloudflare's). */
export interface EdgeBacklog {
  /** Episodes waiting to run here (not counting those running). */
  readonly queued: number;
  /** Episodes run at once. */
  readonly concurrency: number;
  /** Mean run time of the episodes this edge ran lately, in ms; undefined before the first ends. */
  readonly meanEpisodeMs: number | undefined;
}

export const admissionDefaults: AdmissionLimits = {
  // 256: one group of the largest size a request may ask (start-rollout.ts maxGroupSize) fits; at the
  // default 8 at once and ~30 s an episode that is ~16 minutes of work, past which waiting clients
  // learn it from a 429 instead of from a backlog (1,000 groups of 4 were once queued: 27 minutes).
  maxQueuedPerEdge: 256,
  // 1,024: four edges' worth of queues, so one policy cannot take a shared fleet's every slot.
  maxQueuedPerPolicy: 1024,
};

/**
 * Before any episode has ended there is no measured run time: 30 s is a multi-turn sql-agent episode
 * against a local serve-model (docs/edge.md's bounds table). Retry-After only.
 */
export const assumedEpisodeMs = 30_000;

/** Retry-After never says more than an hour: a client should look again by then. */
const maxRetryAfterSeconds = 3600;

/** A refused admission: the message, and when the backlog should have room (seconds). */
export class BacklogFull extends Error {
  override readonly name = 'BacklogFull';
  readonly code = 'backlog-full';
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(`${message}; retry after ${retryAfterSeconds} s`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The Retry-After estimate: the episodes that must end first (`excess`), at the rate they end — one
 * per mean run time per concurrent slot (Little's law over the queue) — rounded up, 1 s at least.
 */
export function retryAfterSeconds(excess: number, meanEpisodeMs: number, concurrency: number): number {
  const ms = (Math.max(1, excess) * meanEpisodeMs) / Math.max(1, concurrency);
  return Math.min(maxRetryAfterSeconds, Math.max(1, Math.ceil(ms / 1000)));
}

/** Throws BacklogFull when this edge's queue has no room for `requested` more episodes. */
export function admitOnEdge(backlog: EdgeBacklog, requested: number, limits: AdmissionLimits): void {
  const bound = limits.maxQueuedPerEdge;
  if (backlog.queued === 0 || backlog.queued + requested <= bound) return;
  const excess = backlog.queued + requested - bound;
  throw new BacklogFull(
    `this edge has ${backlog.queued} episodes queued; ${requested} more would pass its bound of ${bound} (EDGERL_EDGE_MAX_QUEUED_EPISODES)`,
    retryAfterSeconds(excess, backlog.meanEpisodeMs ?? assumedEpisodeMs, backlog.concurrency),
  );
}

/**
 * Throws BacklogFull when the route's policy has no room for `requested` more episodes in flight.
 * `store` is the transaction the group is about to be written in, so a refusal writes nothing.
 */
export async function admitForPolicy(
  store: Store,
  route: Route,
  requested: number,
  limits: AdmissionLimits,
  backlog: EdgeBacklog | undefined,
): Promise<void> {
  const bound = limits.maxQueuedPerPolicy;
  const inFlight = await store.countQueuedEpisodes({ policyVersionId: route.policyVersionId ?? null });
  if (inFlight === 0 || inFlight + requested <= bound) return;
  const excess = inFlight + requested - bound;
  throw new BacklogFull(
    `policy of ${route.model} has ${inFlight} episodes queued or running; ${requested} more would pass its bound of ${bound} (EDGERL_POLICY_MAX_QUEUED_EPISODES)`,
    // This edge's pace stands for the fleet's: the other edges' is not known here.
    retryAfterSeconds(excess, backlog?.meanEpisodeMs ?? assumedEpisodeMs, backlog?.concurrency ?? 1),
  );
}
