// The Node entry: the same Hono app on @hono/node-server, with the embedded PGlite store by default
// (or any store URL), and episodes run in-process by a bounded queue. Returns {url, close()} so
// tests, the demo and `edgerl edge` share one way to start it. An edge started on a store that holds
// unfinished rollouts (the process stopped mid-way) dispatches them again; they resume from their
// stored turns. The SQL agent's sandbox is SQL_DATABASE_URL's server when set, else an embedded one
// in a worker thread (started on the first query). Node-only (PGlite, node:http): the Worker entry is worker.ts.
import { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { serverKeepAliveMs } from '../../protocol/keep-alive.ts';
import { type OpenStoreOptions, openStore } from '../../db/drivers/open-store.ts';
import type { Store } from '../../db/store.ts';
import type { ReadOnlySql } from '../../protocol/read-only-sql.ts';
import { embeddedReadOnlySql } from '../../sandbox/node/embedded-read-only-sql.ts';
import { serverReadOnlySql } from '../../sandbox/node/server-read-only-sql.ts';
import { createApp, type EdgeApp, type EdgeLimits } from '../app.ts';
import type { EdgeConfig } from '../edge-config.ts';
import type { Environment } from '../environments/environment.ts';
import { environments as shippedEnvironments } from '../environments/environments.ts';
import type { EpisodeSettings } from '../episode/episode-defaults.ts';
import type { EpisodeEvent } from '../episode/episode-events.ts';
import type { EpisodeDeps } from '../episode/run-episode.ts';
import { OpenAIPolicyClient } from '../policy/openai-policy-client.ts';
import type { PolicyClient } from '../policy/policy-client.ts';
import { consumeEpisode } from '../rollouts/consume-episode.ts';
import { episodeMessage } from '../rollouts/episode-message.ts';
import { InProcessEpisodeQueue } from '../rollouts/in-process-episode-queue.ts';
import { sharedStoreProvider } from '../store-provider.ts';

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
  /** Default: an OpenAI-compatible client for `config.upstream`. */
  readonly policy?: PolicyClient;
  readonly episodeSettings?: Partial<EpisodeSettings>;
  readonly episodeDeps?: Partial<EpisodeDeps>;
  /** Deliveries of one episode message before it is given up (Cloudflare Queues' default max_retries 3, plus 1). */
  readonly maxDeliveries?: number;
  readonly retryDelayMs?: (attempt: number) => number;
  /**
   * Dispatch the store's unfinished rollouts at start. Default: on for the embedded store (one
   * process owns it), off for a shared server, where another edge may be running them.
   */
  readonly resumeUnfinished?: boolean;
  readonly limits?: Partial<EdgeLimits>;
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
  /** Messages dispatched again at start (unfinished rollouts). */
  readonly resumed: number;
  /** Stops listening, cancels running episodes, closes the store if this edge opened it. */
  close(): Promise<void>;
}

export const defaultMaxDeliveries = 4;

export async function startEdge(options: StartEdgeOptions): Promise<RunningEdge> {
  const { config } = options;
  const log = options.log ?? (() => {});
  const ownsStore = options.store === undefined;
  const store = options.store ?? (await openStore({ migrations: 'apply', ...options.storeOptions }));
  const environments = options.environments ?? shippedEnvironments;
  const ownedSql = options.sql
    ? undefined
    : config.sqlDatabaseUrl
      ? serverReadOnlySql({ url: config.sqlDatabaseUrl })
      : embeddedReadOnlySql();
  const sql = options.sql ?? (ownedSql as ReadOnlySql);
  const policy =
    options.policy ??
    new OpenAIPolicyClient({
      baseUrl: config.upstream.baseUrl,
      ...(config.upstream.apiKey ? { apiKey: config.upstream.apiKey } : {}),
      requestTokenIds: config.upstream.requestTokenIds,
    });
  const maxAttempts = options.maxDeliveries ?? defaultMaxDeliveries;
  const queue = new InProcessEpisodeQueue({
    concurrency: config.episodeConcurrency,
    ...(options.retryDelayMs ? { retryDelayMs: options.retryDelayMs } : {}),
    async run(message, attempt, signal) {
      const consumed = await consumeEpisode(
        {
          store,
          environments,
          policy,
          capabilities: { sql },
          settings: { policyTimeoutMs: config.policyTimeoutMs, ...options.episodeSettings },
          signal,
          ...(options.episodeDeps ? { deps: options.episodeDeps } : {}),
          ...(options.onEpisodeEvent ? { onEvent: options.onEpisodeEvent } : {}),
        },
        message,
        { attempt, maxAttempts },
      );
      if (!consumed.ack) log(`episode ${message.trajectoryId}: delivery ${attempt} failed; retrying`);
      else if (consumed.outcome.kind !== 'ran')
        log(`episode ${message.trajectoryId}: ${consumed.outcome.kind}: ${consumed.outcome.reason}`);
      return consumed.ack;
    },
    onError: (message, error) => log(`episode ${message.trajectoryId}: ${String(error)}`),
  });
  const app = createApp({
    stores: sharedStoreProvider(store),
    environments,
    dispatcher: queue,
    upstream: config.upstream,
    apiKeys: config.apiKeys,
    provides: ['sql'],
    ...(config.defaultModel ? { defaultModel: config.defaultModel } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    logError: (error) =>
      log(`server error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
  });
  let resumed = 0;
  if (options.resumeUnfinished ?? store.driver === 'pglite') {
    const unfinished = await store.unfinishedRollouts();
    await queue.dispatch(unfinished.map((entry) => episodeMessage(entry.groupId, entry.trajectoryId)));
    resumed = unfinished.length;
    if (resumed > 0) log(`resuming ${resumed} unfinished episode(s)`);
  }
  const hostname = options.hostname ?? '127.0.0.1';
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, port: options.port ?? 8787, hostname }, () => resolve(started));
    if (started instanceof Server) started.keepAliveTimeout = serverKeepAliveMs;
    started.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    app,
    store,
    queue,
    sql,
    resumed,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Open event streams would otherwise hold close() until their clients leave.
          if ('closeAllConnections' in server) server.closeAllConnections();
        });
        await queue.close();
        await ownedSql?.close();
        if (ownsStore) await store.close();
      })();
      return closing;
    },
  };
}
