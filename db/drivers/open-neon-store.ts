// Opens the store on the Neon serverless driver's WebSocket Pool: the Worker entry (interactive
// transactions work over WebSockets, unlike Neon's HTTP mode). Imports nothing Node-only: no pg, no
// PGlite, no fs. In a Worker, open a store per request and close it in waitUntil (Neon's guidance:
// a Pool must not outlive the request that created it).
import { neonConfig, Pool, types } from '@neondatabase/serverless';
import { drizzle } from 'drizzle-orm/neon-serverless';
import { type MigrationMode, prepareSchema } from '../migrate.ts';
import { type PoolLike, poolSqlClient } from './pool-sql-client.ts';
import * as schema from '../schema/index.ts';
import { Store } from '../store.ts';
import type { StoreDb } from '../store-db.ts';
import { redactUrl, storeLocation } from './store-location.ts';

/** The neonConfig settings a local setup changes (Neon's defaults suit its hosted service). */
export interface NeonSettings {
  /** Needed where there is no global WebSocket (Node before 22: pass the `ws` package's class). */
  webSocketConstructor?: typeof neonConfig.webSocketConstructor;
  /** A WebSocket-to-TCP proxy for a plain Postgres server, e.g. `(host, port) => 'localhost:9000/v2?address=' + host + ':' + port`. */
  wsProxy?: typeof neonConfig.wsProxy;
  /** false for a local ws:// proxy. */
  useSecureWebSocket?: boolean;
  /** false without TLS. */
  pipelineTLS?: boolean;
  /** false for SCRAM authentication (Neon's "password" pipelining assumes cleartext). */
  pipelineConnect?: false | 'password';
}

export interface OpenNeonStoreOptions {
  /** `postgres://…` / `postgresql://…`. */
  readonly url: string;
  readonly neon?: NeonSettings;
  /** Default `skip`: a Worker opening a store per request should not query migrations each time. */
  readonly migrations?: MigrationMode;
  readonly maxConnections?: number;
}

export async function openNeonStore(options: OpenNeonStoreOptions): Promise<Store> {
  const location = storeLocation(options.url, '');
  if (location.kind !== 'server') {
    throw new Error('openNeonStore needs a postgres:// URL; the embedded store cannot run in a Worker');
  }
  const settings = options.neon ?? {};
  // neonConfig is global to the module; these are the only keys set, and only when given.
  if (settings.webSocketConstructor !== undefined)
    neonConfig.webSocketConstructor = settings.webSocketConstructor;
  if (settings.wsProxy !== undefined) neonConfig.wsProxy = settings.wsProxy;
  if (settings.useSecureWebSocket !== undefined) neonConfig.useSecureWebSocket = settings.useSecureWebSocket;
  if (settings.pipelineTLS !== undefined) neonConfig.pipelineTLS = settings.pipelineTLS;
  if (settings.pipelineConnect !== undefined) neonConfig.pipelineConnect = settings.pipelineConnect;
  const pool = new Pool({ connectionString: location.url, max: options.maxConnections ?? 10 });
  // As in open-store.ts: idle clients' errors on the pool, checked-out clients' on each client.
  pool.on('error', () => {});
  pool.on('connect', (client: { on(event: 'error', listener: () => void): unknown }) =>
    client.on('error', () => {}),
  );
  const store = new Store({
    db: drizzle({ client: pool, schema }) as unknown as StoreDb,
    sql: poolSqlClient(pool as unknown as PoolLike, types.getTypeParser, false),
    driver: 'neon',
    target: redactUrl(location.url),
    close: () => pool.end(),
  });
  try {
    await prepareSchema(store.db, options.migrations ?? 'skip', store.target);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
