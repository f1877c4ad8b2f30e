// The Node entry: the same Hono app on @hono/node-server, with the embedded PGlite store by default
// (or any store URL), and episodes run in-process by a bounded queue. Returns {url, close()} so
// tests, the demo and `edgerl edge` share one way to start it. Every episode it runs or queues is
// leased to this edge's runner name and kept alive by one LeaseKeeper; at start it takes over the
// episodes whose runner stopped (on the embedded store, every running one: one process owns it; on
// a server, the stale ones and its own from before a restart), and a timer sweeps for stale ones
// again, so episodes of a killed edge resume from their stored turns here or on another edge. The
// SQL agent's sandbox is EDGERL_SQL_DATABASE_URL's server when set, else an embedded one in a worker
// thread (started on the first query). Node-only (PGlite, node:http): the Worker entry is worker.ts.
import { Server } from 'node:http';
import { hostname as hostName } from 'node:os';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { serverKeepAliveMs } from '../../protocol/keep-alive.ts';
import { type OpenStoreOptions, openStore } from '../../db/drivers/open-store.ts';
import type { Store, SweepScope } from '../../db/store.ts';
import type { ReadOnlySql } from '../../protocol/read-only-sql.ts';
import { type EmbeddedReadOnlySql, embeddedReadOnlySql } from '../../sandbox/node/embedded-read-only-sql.ts';
import { serverReadOnlySql } from '../../sandbox/node/server-read-only-sql.ts';
import { createApp, type EdgeApp } from '../app.ts';
import type { EdgeLimits } from '../edge-limits.ts';
import { serverErrorLine } from '../http/server-error-line.ts';
import type { EdgeConfig } from '../edge-config.ts';
import type { CapabilityName } from '../environments/capabilities.ts';
import type { Environment } from '../environments/environment.ts';
import { environments as shippedEnvironments } from '../environments/environments.ts';
import type { EpisodeSettings } from '../episode/episode-defaults.ts';
import type { EpisodeEvent } from '../episode/episode-events.ts';
import type { EpisodeDeps } from '../episode/run-episode.ts';
import { edgePolicyClient } from '../policy/edge-policy-client.ts';
import type { PolicyClient } from '../policy/policy-client.ts';
import { consumeEpisode } from '../rollouts/consume-episode.ts';
import type { EpisodeDispatcher, EpisodeMessage } from '../rollouts/episode-message.ts';
import { beatEveryMs, episodeLeaseDefaults } from '../rollouts/episode-leases.ts';
import { InProcessEpisodeQueue } from '../rollouts/in-process-episode-queue.ts';
import { LeaseKeeper } from '../rollouts/lease-keeper.ts';
import { ReplicaRouter } from '../routing/replica-router.ts';
import { sweepEpisodes } from '../rollouts/sweep-episodes.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { sharedStoreProvider } from '../store-provider.ts';
import { useSha256 } from '../../protocol/sha256.ts';
import { clientAddress, nodePeerAddress } from '../../protocol/client-address.ts';
import { GuessLimiter } from '../../protocol/guess-limiter.ts';
import { nodeSha256 } from './node-sha256.ts';

export interface StartEdgeOptions {
  readonly config: EdgeConfig;
  /** Default 8787; 0 picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1: the edge holds API keys and a database; expose it deliberately. */
  readonly hostname?: string;
  /** A store to use (and leave open on close); otherwise one is opened from `storeOptions`. */
  readonly store?: Store;
  /** Default: the embedded store (`.edgerl/pgdata`). */
  readonly storeOptions?: OpenStoreOptions;
  readonly environments?: Readonly<Record<string, Environment>>;
  /**
   * The SQL agent's sandbox (and left open on close); default: `config.sqlDatabaseUrl`'s server, or
   * the embedded sandbox.
   */
  readonly sql?: ReadOnlySql;
  /**
   * Where the embedded SQL sandbox (when it is the one used) keeps its built dump for the next start
   * (`edgerl edge`: beside the data directory). Either way it is built when the first episode that
   * requires `sql` starts, before that episode's first turn, and not at all on an edge that runs none.
   */
  readonly sandboxCacheDir?: string;
  /** Default: an OpenAI-compatible client for `config.upstream`, or for the fleet (`config.fleet`). */
  readonly policy?: PolicyClient;
  readonly episodeSettings?: Partial<EpisodeSettings>;
  readonly episodeDeps?: Partial<EpisodeDeps>;
  /** Deliveries of one episode message before it is given up (Cloudflare Queues' default max_retries 3, plus 1). */
  readonly maxDeliveries?: number;
  readonly retryDelayMs?: (attempt: number) => number;
  /**
   * Take over episodes whose runner stopped, at start and every `config.episodes.sweepSeconds`.
   * Default on, on every driver; off only for tests and benches that count the episodes they start.
   */
  readonly resumeUnfinished?: boolean;
  readonly limits?: Partial<EdgeLimits>;
  /** How long a policy name's route is reused (EdgeDeps.routeCacheMs); default routeCacheMs. */
  readonly routeCacheMs?: number;
  readonly onEpisodeEvent?: (event: EpisodeEvent) => void;
  readonly log?: (line: string) => void;
}

export interface RunningEdge {
  readonly url: string;
  readonly app: EdgeApp;
  readonly store: Store;
  readonly queue: InProcessEpisodeQueue;
  /** The SQL sandbox episodes use. */
  readonly sql: ReadOnlySql;
  /** Episodes taken over and dispatched again at start (unfinished rollouts). */
  readonly resumed: number;
  /** The name this edge's episode leases carry. */
  readonly runner: string;
  readonly keeper: LeaseKeeper;
  /** One sweep for stale episodes now (what the timer runs); resolves to the episodes it dispatched. */
  sweep(): Promise<number>;
  /** Stops listening, cancels running episodes, closes the store if this edge opened it. */
  close(): Promise<void>;
}

export const defaultMaxDeliveries = 4;

export async function startEdge(options: StartEdgeOptions): Promise<RunningEdge> {
  const { config } = options;
  // History digests and key checks with the native hash; the Worker keeps protocol/sha256.ts's.
  useSha256(nodeSha256);
  const log = options.log ?? (() => {});
  const ownsStore = options.store === undefined;
  const store = options.store ?? (await openStore({ migrations: 'apply', ...options.storeOptions }));
  const environments = options.environments ?? shippedEnvironments;
  const embeddedSql =
    options.sql || config.sqlDatabaseUrl
      ? undefined
      : embeddedReadOnlySql(options.sandboxCacheDir ? { cacheDir: options.sandboxCacheDir } : {});
  const ownedSql = options.sql
    ? undefined
    : config.sqlDatabaseUrl
      ? serverReadOnlySql({ url: config.sqlDatabaseUrl })
      : embeddedSql;
  const sql = options.sql ?? (ownedSql as ReadOnlySql);
  const startCapabilities = embeddedSql ? sandboxStarter(embeddedSql, log) : undefined;
  const fleet = config.fleet ? new ReplicaRouter(config.fleet) : undefined;
  const policy = options.policy ?? edgePolicyClient(config, fleet ? { router: fleet, store } : undefined);
  const maxAttempts = options.maxDeliveries ?? defaultMaxDeliveries;
  const leases = config.episodes ?? episodeLeaseDefaults;
  const keeper = new LeaseKeeper({
    store,
    leaseSeconds: leases.leaseSeconds,
    beatEveryMs: beatEveryMs(leases),
    log,
  });
  // Known once the port is: `edge@<host>:<port>` stays the same across restarts on the same port.
  let runner = config.runner;
  const runnerName = () => {
    if (runner === undefined) throw new Error('the edge has no runner name yet');
    return runner;
  };
  const queue = new InProcessEpisodeQueue({
    concurrency: config.episodeConcurrency,
    ...(options.retryDelayMs ? { retryDelayMs: options.retryDelayMs } : {}),
    async run(message, attempt, signal) {
      const consumed = await consumeEpisode(
        {
          store,
          runner: { name: runnerName(), keeper },
          environments,
          policy,
          capabilities: { sql },
          ...(startCapabilities ? { startCapabilities } : {}),
          settings: {
            policyTimeoutMs: config.policyTimeoutMs,
            ...config.bounds,
            ...options.episodeSettings,
          },
          signal,
          ...(options.episodeDeps ? { deps: options.episodeDeps } : {}),
          ...(options.onEpisodeEvent ? { onEvent: options.onEpisodeEvent } : {}),
        },
        message,
        { attempt, maxAttempts },
      );
      if (!consumed.ack) {
        // Kept beating until the redelivery, so no sweep hands it to a second run meanwhile.
        keeper.hold(message.trajectoryId, runnerName());
        log(`episode ${message.trajectoryId}: delivery ${attempt} failed; retrying`);
      } else if (consumed.outcome.kind !== 'ran')
        log(`episode ${message.trajectoryId}: ${consumed.outcome.kind}: ${consumed.outcome.reason}`);
      return consumed.ack;
    },
    onError: (message, error) => log(`episode ${message.trajectoryId}: ${String(error)}`),
  });
  /** Queues episodes this edge holds the lease on (claiming those not claimed yet); skips others. */
  const enqueue = async (messages: readonly EpisodeMessage[], claim: boolean) => {
    const ids = messages.map((message) => message.trajectoryId).filter((id) => !keeper.holds(id));
    if (ids.length === 0) return 0;
    const held = new Set(
      claim
        ? await store.claimTrajectories({
            runner: runnerName(),
            leaseSeconds: leases.leaseSeconds,
            trajectoryIds: ids,
          })
        : ids,
    );
    for (const id of held) keeper.hold(id, runnerName());
    await queue.dispatch(messages.filter((message) => held.has(message.trajectoryId)));
    return held.size;
  };
  const dispatcher: EpisodeDispatcher = {
    async dispatch(messages) {
      await enqueue(messages, true);
    },
  };
  const app = createApp({
    stores: sharedStoreProvider(store),
    environments,
    dispatcher,
    episodeLeaseSeconds: leases.leaseSeconds,
    upstream: config.upstream,
    ...(fleet ? { fleet } : {}),
    apiKeys: config.apiKeys,
    ...(config.recordKeys ? { recordKeys: config.recordKeys } : {}),
    ...(config.rolloutKeys ? { rolloutKeys: config.rolloutKeys } : {}),
    limiter: new GuessLimiter({
      ...(config.authMaxFailures ? { limits: { maxFailures: config.authMaxFailures } } : {}),
      log,
    }),
    // The socket's peer; X-Forwarded-For only as far as EDGERL_EDGE_TRUSTED_PROXIES says.
    clientAddress: (c) =>
      clientAddress({
        remote: nodePeerAddress(c.env),
        forwardedFor: c.req.header('x-forwarded-for'),
        trustedProxies: config.trustedProxies ?? 0,
      }),
    provides: ['sql'],
    ...(config.defaultModel ? { defaultModel: config.defaultModel } : {}),
    limits: { ...config.admission, ...options.limits },
    // Admission reads the in-process queue: waiting episodes and the recent pace (admit-episodes.ts).
    backlog: () => ({
      queued: queue.size.pending + queue.size.retrying,
      concurrency: config.episodeConcurrency,
      meanEpisodeMs: queue.meanRunMs,
    }),
    ...(options.routeCacheMs !== undefined ? { routeCacheMs: options.routeCacheMs } : {}),
    logError: (error) => log(`server error: ${serverErrorLine(error)}`),
  });
  const hostname = options.hostname ?? '127.0.0.1';
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, port: options.port ?? 8787, hostname }, () => resolve(started));
    if (started instanceof Server) started.keepAliveTimeout = serverKeepAliveMs;
    started.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`;
  // Lease owners are at most 200 characters (db/store/fields.ts); a host name may be longer.
  runner ??= `edge@${hostName().slice(0, 180)}:${port}`;
  const resume = options.resumeUnfinished ?? true;
  const sweep = async (scope: SweepScope) => {
    const swept = await sweepEpisodes({
      store,
      runner: runnerName(),
      scope,
      settings: leases,
      dispatch: (messages) => enqueue(messages, false).then(() => {}),
    });
    for (const ended of swept.ended) log(`episode ${ended.trajectoryId}: ended: ${ended.reason}`);
    if (swept.taken.length > 0) log(`resuming ${swept.taken.length} unfinished episode(s)`);
    return swept.taken.length;
  };
  // One process owns an embedded store: whatever is running there has no other runner.
  // A failed first sweep does not stop the edge: the timer's next one tries again.
  const resumed = resume
    ? await sweep(store.driver === 'pglite' ? 'all' : 'stale-or-own').catch((error: unknown) => {
        log(`episode sweep at start failed: ${errorMessage(error)}`);
        return 0;
      })
    : 0;
  let sweeping = false;
  const timer = resume
    ? setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        sweep('stale')
          .catch((error: unknown) => log(`episode sweep failed: ${errorMessage(error)}`))
          .finally(() => {
            sweeping = false;
          });
      }, leases.sweepSeconds * 1000)
    : undefined;
  timer?.unref();
  let closing: Promise<void> | undefined;
  return {
    url,
    app,
    store,
    queue,
    sql,
    resumed,
    runner: runnerName(),
    keeper,
    sweep: () => sweep('stale'),
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Open event streams would otherwise hold close() until their clients leave.
          if ('closeAllConnections' in server) server.closeAllConnections();
        });
        await queue.close();
        // Episodes still queued here are handed back, for another edge or the next start.
        await keeper.releaseAll();
        await ownedSql?.close();
        if (ownsStore) await store.close();
      })();
      return closing;
    },
  };
}

/**
 * Builds (or loads) the embedded sandbox once, when the first episode that requires `sql` starts; every
 * such episode waits for that one start. A failed start is logged and tried again by the next episode
 * (its queries would say the sandbox is unavailable), and never fails the episode here.
 */
function sandboxStarter(
  sandbox: EmbeddedReadOnlySql,
  log: (line: string) => void,
): (required: readonly CapabilityName[]) => Promise<void> {
  let starting: Promise<void> | undefined;
  const start = async () => {
    const started = performance.now();
    try {
      await sandbox.warm();
      const how = sandbox.stats.cached ? 'loaded from its cache' : 'built';
      log(`SQL sandbox ready in ${Math.round(performance.now() - started)} ms (${how})`);
    } catch (error) {
      starting = undefined;
      log(`SQL sandbox did not start: ${errorMessage(error)}; the next sql episode tries again`);
    }
  };
  return async (required) => {
    if (!required.includes('sql')) return;
    starting ??= start();
    await starting;
  };
}
