// A migrated test store whose driver counts round trips: every statement the store sends to the
// database (BEGIN and COMMIT included) is one. PGlite has no network, so there a "round trip" is one
// call into the embedded backend, counted the same way: a PGlite transaction is BEGIN + its queries +
// COMMIT, and a simple-protocol exec (several statements) is one call too. Embedded by default; a
// fresh database on the server when EDGERL_TEST_DATABASE_URL is set.
// `openCountingStoreAt` opens one on a given database instead (bench/edge.ts counts the edge's trips).
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzleNodePostgres } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { pgliteSqlClient } from '../../db/drivers/pglite-sql-client.ts';
import { type PoolLike, poolSqlClient } from '../../db/drivers/pool-sql-client.ts';
import { type MigrationMode, prepareSchema } from '../../db/migrate.ts';
import * as schema from '../../db/schema/index.ts';
import { Store } from '../../db/store.ts';
import type { StoreDb } from '../../db/store-db.ts';
import { redactUrl } from '../../db/drivers/store-location.ts';
import { createTestDatabase, testServerUrl } from './open-test-store.ts';

export interface CountingStore {
  readonly store: Store;
  /** Statements sent since the store opened (or since the last `reset`). */
  roundTrips(): number;
  /** Rows those statements returned (what the store read back), since the same point. */
  rowsRead(): number;
  /** The statements since the same point, by kind (statementKind), with how many of each. */
  statements(): ReadonlyMap<string, number>;
  reset(): void;
  close(): Promise<void>;
}

/** Counts the round trips of `work` alone. */
export async function roundTripsOf(counting: CountingStore, work: () => Promise<unknown>): Promise<number> {
  counting.reset();
  await work();
  return counting.roundTrips();
}

type Query = (...args: never[]) => Promise<unknown>;

/** Rows in a driver's query result: one result (`rows`) or, for several statements, an array of them. */
function rowCount(result: unknown): number {
  if (Array.isArray(result)) return result.reduce((total: number, one) => total + rowCount(one), 0);
  const rows = (result as { rows?: unknown } | null | undefined)?.rows;
  return Array.isArray(rows) ? rows.length : 0;
}

/**
 * A statement's kind: its first words up to the table it works on (`update "trajectories"`, `with
 * recursive advanced as ( update trajectories`), enough to tell the store's statements apart.
 */
export function statementKind(text: string): string {
  const words = text.replace(/\s+/g, ' ').trim();
  const table = /^(.*?\b(?:from|into|update|join) "?[a-z_]+"?)/i.exec(words);
  return (table?.[1] ?? words).slice(0, 80);
}

/** The SQL text of a driver's query call: a string, or pg's query config `{ text }`. */
function textOf(first: unknown): string {
  if (typeof first === 'string') return first;
  const text = (first as { text?: unknown } | null | undefined)?.text;
  return typeof text === 'string' ? text : '?';
}

/** Replaces `target.query` with one that counts each call and the rows it returns. */
function countQueries(
  target: { query: Query },
  count: (text: string) => void,
  read: (rows: number) => void,
): void {
  const query = target.query.bind(target) as (...args: unknown[]) => Promise<unknown>;
  target.query = ((...args: unknown[]) => {
    count(textOf(args[0]));
    // pg's Pool.query calls its client's query with a callback: count the rows the callback gets.
    const last = args.at(-1);
    if (typeof last === 'function') {
      const callback = last as (error: unknown, value: unknown) => void;
      args[args.length - 1] = (error: unknown, value: unknown) => {
        if (!error) read(rowCount(value));
        callback(error, value);
      };
      return query(...args);
    }
    const result = query(...args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      return result.then((value) => {
        read(rowCount(value));
        return value;
      });
    }
    return result;
  }) as Query;
}

/** A counting store on a fresh database: on the test server when one is set, else in-memory PGlite. */
export async function openCountingStore(): Promise<CountingStore> {
  if (!testServerUrl) return openCountingStoreAt({});
  const database = await createTestDatabase(testServerUrl);
  const counting = await openCountingStoreAt({ url: database.url });
  return {
    ...counting,
    async close() {
      await counting.close();
      await database.drop();
    },
  };
}

export interface CountingStoreOptions {
  /** A `postgres://…` server database; absent: a fresh in-memory PGlite. */
  readonly url?: string;
  /** The server pool's most connections (default 10, node-postgres's own). */
  readonly maxConnections?: number;
  /** Default `apply`. */
  readonly migrations?: MigrationMode;
}

/** A counting store on `url` (left in place on close), or on a fresh in-memory PGlite. */
export async function openCountingStoreAt(options: CountingStoreOptions): Promise<CountingStore> {
  let trips = 0;
  let rows = 0;
  let kinds = new Map<string, number>();
  // PGlite runs the store's prepared statements as `prepare NAME as TEXT; execute NAME(…)`, then
  // `execute NAME(…)`: the name stands for the text's kind.
  const prepared = new Map<string, string>();
  const count = (text: string) => {
    trips += 1;
    const prepare = /^prepare (\w+) as (.*)/is.exec(text);
    if (prepare) prepared.set(prepare[1] as string, statementKind(prepare[2] as string));
    const execute = /^execute (\w+)/i.exec(text);
    const kind =
      (execute ? prepared.get(execute[1] as string) : undefined) ?? statementKind(prepare?.[2] ?? text);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  };
  const read = (returned: number) => {
    rows += returned;
  };
  let store: Store;
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections ?? 10 });
    pool.on('error', () => {});
    // Every client the pool opens counts its statements; pool.query goes through one of them.
    pool.on('connect', (client) => {
      client.on('error', () => {});
      countQueries(client as unknown as { query: Query }, count, read);
    });
    store = new Store({
      db: drizzleNodePostgres({ client: pool, schema }) as unknown as StoreDb,
      sql: poolSqlClient(pool as unknown as PoolLike, pg.types.getTypeParser, true),
      driver: 'node-postgres',
      target: `counting store on ${redactUrl(options.url)}`,
      close: () => pool.end(),
    });
  } else {
    const pglite = await PGlite.create();
    countQueries(pglite as unknown as { query: Query }, count, read);
    // The store's prepared statements run through the simple protocol (db/named-statement.ts): one
    // exec is one call into the backend, whatever it holds.
    const exec = pglite.exec.bind(pglite);
    pglite.exec = ((...args: Parameters<typeof exec>) => {
      count(args[0]);
      return exec(...args).then((results) => {
        read(rowCount(results));
        return results;
      });
    }) as typeof pglite.exec;
    const transaction = pglite.transaction.bind(pglite);
    pglite.transaction = ((work: (tx: { query: Query }) => Promise<unknown>) => {
      count('begin');
      return transaction(async (tx) => {
        countQueries(tx as unknown as { query: Query }, count, read);
        const result = await work(tx as unknown as { query: Query });
        count('commit'); // or ROLLBACK
        return result;
      });
    }) as typeof pglite.transaction;
    store = new Store({
      db: drizzlePglite({ client: pglite, schema }) as unknown as StoreDb,
      sql: pgliteSqlClient(pglite),
      driver: 'pglite',
      target: 'memory:// (counting)',
      close: () => pglite.close(),
    });
  }
  try {
    await prepareSchema(store.db, options.migrations ?? 'apply', store.target);
  } catch (error) {
    await store.close();
    throw error;
  }
  trips = 0;
  rows = 0;
  kinds = new Map();
  return {
    store,
    roundTrips: () => trips,
    rowsRead: () => rows,
    statements: () => kinds,
    reset: () => {
      trips = 0;
      rows = 0;
      kinds = new Map();
    },
    close: () => store.close(),
  };
}
