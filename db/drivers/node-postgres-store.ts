// A Store on a node-postgres Pool, shared by Node's server driver (open-store.ts) and the Worker's
// Hyperdrive driver (open-hyperdrive-store.ts). Imports only pg and drizzle's pg adapter: no fs, no
// PGlite, so the Worker may bundle it (pg picks its socket per runtime, see open-hyperdrive-store.ts).
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { type PoolLike, poolSqlClient } from './pool-sql-client.ts';
import * as schema from '../schema/index.ts';
import { Store } from '../store.ts';
import type { StoreDb } from '../store-db.ts';
import { redactUrl } from './store-location.ts';

export interface NodePostgresStoreOptions {
  /** A `postgres://…` URL, already checked by storeLocation. */
  readonly url: string;
  /** The pool's most connections. */
  readonly maxConnections: number;
}

/** The store on a fresh pool; nothing is queried until first use, and close() ends the pool. */
export function nodePostgresStore(options: NodePostgresStoreOptions): Store {
  const pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections });
  // A lost connection must never crash the process; the query on it (or the next one) reports it.
  // The pool's own 'error' covers idle clients only: a client checked out (inside a transaction,
  // or held by the SQL client) emits 'error' on itself, so every client gets a listener too. The
  // pool drops a broken client when it is released (pg-pool checks `_queryable`).
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return new Store({
    db: drizzle({ client: pool, schema }) as unknown as StoreDb,
    sql: poolSqlClient(pool as unknown as PoolLike, pg.types.getTypeParser, true),
    driver: 'node-postgres',
    target: redactUrl(options.url),
    close: () => pool.end(),
  });
}
