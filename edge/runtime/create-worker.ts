// The Cloudflare Workers handlers as a factory, `createWorker({environments})` (the public entry
// `edgerl/worker`): a user's Worker entry serves its own environments with `export default
// createWorker({ environments })`; edgerl's own entry, worker.ts, is the factory with the shipped ones.
// `fetch` serves the Hono app, `queue` consumes episode messages, `scheduled` (the cron trigger in wrangler.toml) sweeps for episodes whose consumer died and sends
// them to the EPISODES queue again, or ends them with a reason (edge/rollouts/sweep-episodes.ts).
// Episodes fan out through Cloudflare Queues rather than Durable Objects or Workflows: an episode is
// one independent job that needs at-least-once delivery, retries, a dead-letter queue and
// consumer concurrency that scales with the backlog, which is what Queues are; its durable log
// is already the store's turns table (a Workflow's step log would duplicate it, and a Durable
// Object per episode would add state and cost without a second writer to coordinate).
// The store opens per request or queue batch and closes in waitUntil: node-postgres through the
// HYPERDRIVE binding when there is one, else Neon's WebSocket pool on DATABASE_URL (worker-store.ts).
// No PGlite or fs here (wrangler's bundle would fail or bloat). Not a Worker entry itself: it exports
// the factory, and workerd reads every named export of an entry as an entrypoint.
// The SQL agent's sandbox is the EDGERL_SQL_DATABASE_URL binding (the reader role, never DATABASE_URL), a
// Neon pool per queue batch like the store's; without it POST /v1/rollouts refuses sql-agent (400).
import { neonReadOnlySql } from '../../sandbox/neon-read-only-sql.ts';
import { createApp, type EdgeApp } from '../app.ts';
import { type EdgeConfig, edgeConfigFromEnv } from '../edge-config.ts';
import { combineEnvironments } from '../environments/combine-environments.ts';
import type { EnvironmentList, EnvironmentRecord } from '../environments/environment-record.ts';
import { environments as shippedEnvironments } from '../environments/environments.ts';
import { errorResponse } from '../http/error-response.ts';
import { ApiError } from '../http/api-error.ts';
import { edgePolicyClient } from '../policy/edge-policy-client.ts';
import { consumeEpisode } from '../rollouts/consume-episode.ts';
import { type EpisodeMessage, episodeMessageSchema } from '../rollouts/episode-message.ts';
import { beatEveryMs, episodeLeaseDefaults } from '../rollouts/episode-leases.ts';
import { LeaseKeeper } from '../rollouts/lease-keeper.ts';
import { sweepEpisodes } from '../rollouts/sweep-episodes.ts';
import { ReplicaRouter } from '../routing/replica-router.ts';
import { queueMaxDeliveries, retryDelaySeconds } from '../rollouts/queue-delivery.ts';
import { queueDispatcher } from './queue-dispatcher.ts';
import { perUseStoreProvider } from '../store-provider.ts';
import { type WorkerStore, type WorkerStoreBindings, workerStore } from './worker-store.ts';
import type {
  ExecutionContextLike,
  MessageBatchLike,
  QueueLike,
  QueueMessageLike,
  ScheduledControllerLike,
} from './worker-types.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { clientAddress } from '../../protocol/client-address.ts';
import { GuessLimiter } from '../../protocol/guess-limiter.ts';

/** The store's bindings (HYPERDRIVE, DATABASE_URL, NEON_DEV_WS_PROXY) are WorkerStoreBindings'. */
export interface WorkerEnv extends WorkerStoreBindings {
  /** Secret: the SQL sandbox's reader URL (`edgerl sandbox setup`); unset, sql-agent is refused. */
  readonly EDGERL_SQL_DATABASE_URL?: string;
  readonly EDGERL_INFERENCE_URL?: string;
  /** The inference fleet, comma-separated base URLs (edge/edge-config.ts); replaces EDGERL_INFERENCE_URL. */
  readonly EDGERL_INFERENCE_REPLICAS?: string;
  readonly EDGERL_FLEET_CACHE_MS?: string;
  readonly EDGERL_INFERENCE_API_KEY?: string;
  readonly EDGERL_INFERENCE_TOKEN_IDS?: string;
  readonly EDGERL_INFERENCE_TIMEOUT_MS?: string;
  readonly EDGERL_EDGE_API_KEYS?: string;
  /** Scoped keys (edge/edge-config.ts, docs/edge.md "API keys and scopes"); EDGERL_EDGE_API_KEYS hold every scope. */
  readonly EDGERL_EDGE_RECORD_KEYS?: string;
  readonly EDGERL_EDGE_ROLLOUT_KEYS?: string;
  readonly EDGERL_EDGE_AUTH_MAX_FAILURES?: string;
  readonly EDGERL_EDGE_TRUSTED_PROXIES?: string;
  readonly EDGERL_DEFAULT_MODEL?: string;
  /** Episode leases and the cron sweep's limits (edge/edge-config.ts); EDGERL_EPISODE_SWEEP_SECONDS is Node's, the cron is wrangler.toml's. */
  readonly EDGERL_EPISODE_LEASE_SECONDS?: string;
  readonly EDGERL_EPISODE_MAX_RESUMES?: string;
  readonly EDGERL_EPISODE_MAX_AGE_SECONDS?: string;
  readonly EPISODES: QueueLike<EpisodeMessage>;
}

/** What workerd calls: the module's default export. */
export interface WorkerHandlers {
  fetch(request: Request, env: WorkerEnv, ctx: ExecutionContextLike): Promise<Response>;
  queue(batch: MessageBatchLike<unknown>, env: WorkerEnv, ctx: ExecutionContextLike): Promise<void>;
  scheduled(controller: ScheduledControllerLike, env: WorkerEnv, ctx: ExecutionContextLike): Promise<void>;
}

interface Prepared {
  readonly config: EdgeConfig;
  /** The fleet's router (its cache lives as long as the isolate), when EDGERL_INFERENCE_REPLICAS is set. */
  readonly fleet: ReplicaRouter | undefined;
  readonly app: EdgeApp;
  readonly openStore: WorkerStore['open'];
}

function prepare(
  prepared: WeakMap<object, Prepared>,
  environments: EnvironmentRecord,
  env: WorkerEnv,
): Prepared {
  const cached = prepared.get(env);
  if (cached) return cached;
  const config = edgeConfigFromEnv(env as unknown as Readonly<Record<string, string | undefined>>);
  const openStore = workerStore(env).open;
  const fleet = config.fleet ? new ReplicaRouter(config.fleet) : undefined;
  const app = createApp({
    stores: perUseStoreProvider(openStore),
    environments,
    dispatcher: queueDispatcher(env.EPISODES),
    // The per-policy bound (a count in the store) applies before anything is sent to the Queue; the
    // Queue's own depth is Cloudflare's, so no per-edge bound here.
    ...(config.admission ? { limits: config.admission } : {}),
    episodeLeaseSeconds: (config.episodes ?? episodeLeaseDefaults).leaseSeconds,
    upstream: config.upstream,
    ...(fleet ? { fleet } : {}),
    apiKeys: config.apiKeys,
    ...(config.recordKeys ? { recordKeys: config.recordKeys } : {}),
    ...(config.rolloutKeys ? { rolloutKeys: config.rolloutKeys } : {}),
    // Per isolate: Cloudflare runs several, each counting its own (docs/edge.md, "Guessing keys").
    limiter: new GuessLimiter(
      config.authMaxFailures ? { limits: { maxFailures: config.authMaxFailures } } : {},
    ),
    // Cloudflare sets cf-connecting-ip to the connecting client and overwrites any the client sent.
    clientAddress: (c) =>
      clientAddress({
        remote: c.req.header('cf-connecting-ip'),
        forwardedFor: c.req.header('x-forwarded-for'),
        trustedProxies: config.trustedProxies ?? 0,
      }),
    provides: config.sqlDatabaseUrl ? ['sql'] : [],
    ...(config.defaultModel ? { defaultModel: config.defaultModel } : {}),
  });
  const entry = { config, fleet, app, openStore };
  prepared.set(env, entry);
  return entry;
}

export interface CreateWorkerOptions {
  /** Your environments, as a record or an array; default none (the shipped ones only). */
  readonly environments?: EnvironmentList;
  /** Serve the shipped environments beside yours (default true, as `edgerl edge --environments` does). */
  readonly shipped?: boolean;
}

/** The Worker's handlers, serving `options.environments` (with the shipped ones unless `shipped: false`). */
export function createWorker(options: CreateWorkerOptions = {}): WorkerHandlers {
  const environments = options.environments
    ? combineEnvironments(options.environments, { shipped: options.shipped ?? true })
    : shippedEnvironments;
  // The env object is fixed for an isolate's life; build the app once per env.
  const prepared = new WeakMap<object, Prepared>();
  const prepareFor = (env: WorkerEnv) => prepare(prepared, environments, env);
  return {
    async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContextLike): Promise<Response> {
      let app: EdgeApp;
      try {
        app = prepareFor(env).app;
      } catch (error) {
        // Misconfiguration is the operator's to fix: say which variable, never echo a secret.
        const message = errorMessage(error);
        const response = errorResponse(new ApiError('unavailable', message));
        return Response.json(response.body, { status: response.status });
      }
      return app.fetch(request, env, ctx);
    },

    async queue(batch: MessageBatchLike<unknown>, env: WorkerEnv, ctx: ExecutionContextLike): Promise<void> {
      const { config, fleet, openStore } = prepareFor(env);
      const store = await openStore();
      const sql = config.sqlDatabaseUrl ? neonReadOnlySql(config.sqlDatabaseUrl) : undefined;
      const policy = edgePolicyClient(config, fleet ? { router: fleet, store } : undefined);
      const leases = config.episodes ?? episodeLeaseDefaults;
      const keeper = new LeaseKeeper({
        store,
        leaseSeconds: leases.leaseSeconds,
        beatEveryMs: beatEveryMs(leases),
      });
      try {
        await Promise.all(
          batch.messages.map(async (message) => {
            const consumed = await consumeEpisode(
              {
                store,
                runner: { name: runnerOf(message), keeper },
                environments,
                policy,
                capabilities: sql ? { sql } : {},
                settings: { policyTimeoutMs: config.policyTimeoutMs, ...config.bounds },
              },
              message.body,
              { attempt: message.attempts, maxAttempts: queueMaxDeliveries },
            );
            if (consumed.ack) message.ack();
            else message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
          }),
        );
      } finally {
        ctx.waitUntil(keeper.releaseAll().finally(() => store.close()));
        if (sql) ctx.waitUntil(sql.close());
      }
    },

    async scheduled(
      _controller: ScheduledControllerLike,
      env: WorkerEnv,
      ctx: ExecutionContextLike,
    ): Promise<void> {
      const { config, openStore } = prepareFor(env);
      const store = await openStore();
      try {
        const swept = await sweepEpisodes({
          store,
          // One name per sweep: each message it sends carries it, so every delivery runs under the lease.
          runner: `cron:${crypto.randomUUID()}`,
          scope: 'stale',
          settings: config.episodes ?? episodeLeaseDefaults,
          dispatch: (messages) => queueDispatcher(env.EPISODES).dispatch(messages),
        });
        if (swept.taken.length + swept.ended.length > 0) {
          console.log(
            `episode sweep: ${swept.taken.length} resumed, ${swept.ended.length} ended, ${swept.completedGroups.length} group(s) completed`,
          );
        }
      } finally {
        ctx.waitUntil(store.close());
      }
    },
  };
}

/**
 * The lease's runner for one delivery: the one a sweep named in the message, or the message's own
 * id, which every redelivery of it repeats, so a redelivery after its consumer died takes over at once.
 */
function runnerOf(message: QueueMessageLike<unknown>): string {
  const parsed = episodeMessageSchema.safeParse(message.body);
  return parsed.success && parsed.data.runner ? parsed.data.runner : `queue:${message.id}`;
}
