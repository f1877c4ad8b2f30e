// The edge's request-size, event-stream and admission limits with their defaults. Kept apart from
// app.ts (Hono, the console, the routes) so that `edgerl import --help` can state the ingest body limit
// without loading the edge; app.ts takes them, overridable per deployment (EdgeDeps.limits).
import { admissionDefaults } from './rollouts/admit-episodes.ts';

export interface EdgeLimits {
  /** Largest POST /v1/rollouts body, in bytes. */
  readonly rolloutBodyBytes: number;
  /** Largest proxied chat request, in bytes: whole conversations with tool output travel each call. */
  readonly proxyBodyBytes: number;
  /** Largest trajectory start / finish body, in bytes. */
  readonly trajectoryBodyBytes: number;
  /** Largest POST /v1/trajectories body that carries whole episodes with their turns, in bytes. */
  readonly ingestBodyBytes: number;
  /** How often an event stream polls the store for new turns, in milliseconds. */
  readonly ssePollMs: number;
  /** Longest event stream before the client is asked to reconnect, in milliseconds. */
  readonly sseMaxMs: number;
  /** Episodes waiting in this edge's queue above which a rollout is refused (429), Node only. */
  readonly maxQueuedPerEdge: number;
  /** A policy's rollout episodes queued or running (all edges) above which a rollout is refused (429). */
  readonly maxQueuedPerPolicy: number;
}

export const defaultLimits: EdgeLimits = {
  rolloutBodyBytes: 64 * 1024,
  // OpenAI's own request limit is far larger; 8 MiB covers long agent conversations with tool output.
  proxyBodyBytes: 8 * 1024 * 1024,
  trajectoryBodyBytes: 256 * 1024,
  // As for the proxy: a batch of recorded episodes is a few long conversations' worth; clients batch more.
  ingestBodyBytes: 8 * 1024 * 1024,
  // A quarter second keeps a live view fluid at one cheap indexed query per poll.
  ssePollMs: 250,
  // Well under the time proxies and load balancers allow an idle-looking response.
  sseMaxMs: 10 * 60 * 1000,
  // Why each: admit-episodes.ts.
  ...admissionDefaults,
};
