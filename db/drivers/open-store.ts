// Opens the store in Node, choosing the driver from the URL (see store-location.ts): embedded PGlite
// (migrated on open; one process at a time, see dir-lock.ts), or node-postgres for a server (checked
// for missing migrations on open, node-postgres-store.ts). The Worker entries are
// open-hyperdrive-store.ts and open-neon-store.ts; this file imports Node-only modules and must stay out of Workers.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { type DirLock, lockDataDir } from './dir-lock.ts';
import { type MigrationMode, prepareSchema } from '../migrate.ts';
import { pgliteSqlClient } from './pglite-sql-client.ts';
import { nodePostgresStore } from './node-postgres-store.ts';
import * as schema from '../schema/index.ts';
import { Store } from '../store.ts';
import type { StoreDb } from '../store-db.ts';
import { defaultDataDir, storeLocation } from './store-location.ts';

export interface OpenStoreOptions {
  /** `postgres://…` / `postgresql://…` for a server, `memory://` for a throwaway store; absent: embedded. */
  readonly url?: string;
  /** The embedded store's directory (default `.edgerl/pgdata`, resolved against `cwd`). */
  readonly dataDir?: string;
  /** Base for a relative `dataDir` (default: the process's working directory). */
  readonly cwd?: string;
  /** `apply` migrates, `check` fails when migrations are missing, `skip` does neither.
   * Default: `apply` for embedded stores (they migrate themselves), `check` for servers. */
  readonly migrations?: MigrationMode;
  /** node-postgres pool size (default 10, node-postgres's own default). */
  readonly maxConnections?: number;
}

export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const cwd = options.cwd ?? process.cwd();
  const location = storeLocation(options.url, resolve(cwd, options.dataDir ?? defaultDataDir));
  let store: Store;
  if (location.kind === 'server') {
    store = nodePostgresStore({ url: location.url, maxConnections: options.maxConnections ?? 10 });
  } else {
    let lock: DirLock | undefined;
    if (location.kind === 'embedded') {
      mkdirSync(dirname(location.dataDir), { recursive: true });
      lock = lockDataDir(location.dataDir);
    }
    let pglite: PGlite;
    try {
      pglite = await PGlite.create(location.kind === 'embedded' ? { dataDir: location.dataDir } : {});
    } catch (error) {
      lock?.release();
      throw error;
    }
    store = new Store({
      db: drizzlePglite({ client: pglite, schema }) as unknown as StoreDb,
      sql: pgliteSqlClient(pglite),
      driver: 'pglite',
      target: location.kind === 'embedded' ? location.dataDir : 'memory://',
      close: async () => {
        try {
          await pglite.close();
        } finally {
          lock?.release();
        }
      },
    });
  }
  const mode = options.migrations ?? (location.kind === 'server' ? 'check' : 'apply');
  try {
    await prepareSchema(store.db, mode, store.target);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
