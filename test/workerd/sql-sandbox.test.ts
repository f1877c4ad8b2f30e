// The SQL agent's sandbox inside workerd: sandbox/neon-read-only-sql.ts on the EDGERL_SQL_DATABASE_URL
// binding (a reader role made by setupSandbox in global-setup.ts), through the same tunnel as the
// Neon store. Needs EDGERL_TEST_DATABASE_URL; without it no sandbox exists and these are skipped.
import { env } from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import { sqlStateOf } from '../../edge/environments/sql-agent/sql-error.ts';
import type { WorkerEnv } from '../../edge/runtime/worker.ts';
import { neonReadOnlySql } from '../../sandbox/neon-read-only-sql.ts';
import { openWorkerdTestStore } from './neon-test-store.ts';

const context = inject('workerd');
const limits = { timeoutMs: 5_000, maxRows: 100 };

/** The sandbox as the queue consumer opens it; Neon's tunnel settings come from opening a store first. */
async function withSandbox<T>(work: (sql: ReturnType<typeof neonReadOnlySql>) => Promise<T>): Promise<T> {
  const store = await openWorkerdTestStore();
  const url = (env as unknown as WorkerEnv).EDGERL_SQL_DATABASE_URL;
  if (!url) throw new Error('no EDGERL_SQL_DATABASE_URL binding');
  const sql = neonReadOnlySql(url);
  try {
    return await work(sql);
  } finally {
    await sql.close();
    await store.close();
  }
}

/** The error a query throws, or a failure when it does not throw. */
async function failureOf(run: Promise<unknown>): Promise<unknown> {
  try {
    await run;
  } catch (error) {
    return error;
  }
  throw new Error('the query ran');
}

describe.runIf(context.sqlDatabaseUrl)('the SQL sandbox in workerd', () => {
  it('reads the sample shop under the reader role, its names resolving to the sample schema', async () => {
    const read = await withSandbox((sql) =>
      sql.query('select current_user, count(*)::int from customers', limits),
    );
    expect(read.columns).toEqual(['current_user', 'count']);
    expect(read.rows[0]?.[0]).toBe(new URL(context.sqlDatabaseUrl).username);
    expect(Number(read.rows[0]?.[1])).toBeGreaterThan(0);
  });

  it('refuses a write and cancels a query past its timeout, with their SQLSTATEs', async () => {
    await withSandbox(async (sql) => {
      // Refused or failed, never run (as in test/faults/sql-sandbox-corpus.test.ts): the statement runs
      // as a cursor in a read-only transaction, which an UPDATE cannot be (42601).
      const write = await failureOf(sql.query("update customers set name = 'x'", limits));
      expect(sqlStateOf(write)).toMatch(/^(42|25)/);
      const slow = await failureOf(sql.query('select pg_sleep(5)', { timeoutMs: 100, maxRows: 1 }));
      expect(sqlStateOf(slow)).toBe('57014');
      // The pool still answers after both.
      const after = await sql.query('select count(*)::int from products', limits);
      expect(Number(after.rows[0]?.[0])).toBeGreaterThan(0);
    });
    const unchanged = await withSandbox((sql) =>
      sql.query("select count(*)::int from customers where name = 'x'", limits),
    );
    expect(Number(unchanged.rows[0]?.[0])).toBe(0);
  });
});
