// A fresh, migrated store for one test file: in-memory PGlite by default, or — when
// EDGERL_TEST_DATABASE_URL names a Postgres server — a brand-new database on it
// (`edgerl_t_<random>`), dropped again by `close()`, so test files running in parallel never collide.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore } from '../../db/drivers/open-store.ts';
import type { Store } from '../../db/store.ts';

/** The server the suite's second run uses (see .ci/run); undefined on the embedded run. */
export const testServerUrl: string | undefined = process.env.EDGERL_TEST_DATABASE_URL || undefined;

export interface TestStore {
  readonly store: Store;
  /** The URL of the temporary server database, or `memory://`. */
  readonly url: string;
  /** Closes the store and drops the temporary database. */
  close(): Promise<void>;
}

export async function openTestStore(options: { maxConnections?: number } = {}): Promise<TestStore> {
  if (!testServerUrl) {
    const store = await openStore({ url: 'memory://' });
    return { store, url: 'memory://', close: () => store.close() };
  }
  const database = await createTestDatabase(testServerUrl);
  const store = await openStore({
    url: database.url,
    migrations: 'apply',
    maxConnections: options.maxConnections,
  });
  return {
    store,
    url: database.url,
    async close() {
      await store.close();
      await database.drop();
    },
  };
}

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** Creates an empty database beside the one `serverUrl` names; `drop` removes it (forcing out sessions). */
export async function createTestDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `edgerl_t_${randomBytes(6).toString('hex')}`;
  await withAdmin(serverUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await withAdmin(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

async function withAdmin<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
