// runReadOnlyQuery on the sample database: answers, refusals before running, writes stopped by the
// READ ONLY transaction, Postgres errors with their SQLSTATE, row limits and (on a server) timeouts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError, type StoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { openTestStore, type TestStore, testServerUrl } from '../support/open-test-store.ts';

let testStore: TestStore;
let store: Store;

beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
});
afterAll(async () => {
  await testStore?.close();
});

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isStoreError(error)) throw new Error(`expected a StoreError, got ${String(error)}`);
  return error;
}

const sample = { searchPath: ['sample'] };

describe('runReadOnlyQuery', () => {
  it('answers queries on the sample database with stable values on every driver', async () => {
    const counts = await store.runReadOnlyQuery({
      ...sample,
      sql: `select (select count(*) from customers), (select count(*) from products),
                   (select count(*) from orders), (select count(*) from order_items)`,
    });
    // The migration's row counts: 24 customers, 16 products, 48 orders, 89 order items.
    expect(counts.rows).toEqual([[24, 16, 48, 89]]);
    // The migration says customers 11, 22, 23 and 24 never ordered.
    const never = await store.runReadOnlyQuery({
      ...sample,
      sql: 'select id from customers where id not in (select customer_id from orders) order by id;',
    });
    expect(never.rows).toEqual([[11], [22], [23], [24]]);
    // numeric stays exact text, dates stay Postgres's text, whatever the driver or the local time zone.
    const product = await store.runReadOnlyQuery({
      ...sample,
      sql: "select price, 'a;b' as s from products where id = 1",
    });
    expect(product).toEqual({ columns: ['price', 's'], rows: [['119.00', 'a;b']], truncated: false });
    const customer = await store.runReadOnlyQuery({
      ...sample,
      sql: 'select signed_up_on from customers where id = 1',
    });
    expect(customer.rows[0]?.[0]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('refuses several statements, writes and empty input before running anything', async () => {
    const cases: [string, string][] = [
      ['select 1; select 2', 'only one statement'],
      ['delete from sample.orders', 'got DELETE'],
      ['  -- only a comment\n', 'empty'],
      ['drop table sample.orders; select 1', 'only one statement'],
      ['set transaction read write', 'got SET'],
    ];
    for (const [sql, reason] of cases) {
      const error = await rejection(store.runReadOnlyQuery({ sql }));
      expect(error.code).toBe('query-refused');
      expect(error.message).toContain(reason);
    }
  });

  it('lets the READ ONLY transaction stop a write hidden in a CTE', async () => {
    const error = await rejection(
      store.runReadOnlyQuery({
        sql: 'with gone as (delete from sample.orders returning id) select count(*) from gone',
      }),
    );
    expect(error.code).toBe('query-failed');
    expect(error.message).toContain('25006'); // read_only_sql_transaction
    expect((await store.runReadOnlyQuery({ sql: 'select count(*) from sample.orders' })).rows).toEqual([
      [48],
    ]);
  });

  it('reports Postgres errors with their SQLSTATE', async () => {
    const error = await rejection(store.runReadOnlyQuery({ ...sample, sql: 'select nope from customers' }));
    expect(error.code).toBe('query-failed');
    expect(error.message).toMatch(/column "nope" does not exist \(SQLSTATE 42703\)/);
  });

  it('returns at most maxRows rows and says when it cut', async () => {
    const result = await store.runReadOnlyQuery({ sql: 'select generate_series(1, 10) as n', maxRows: 3 });
    expect(result).toEqual({ columns: ['n'], rows: [[1], [2], [3]], truncated: true });
  });

  it('rejects bad options with the field named', async () => {
    const error = await rejection(
      store.runReadOnlyQuery({ sql: 'select 1', timeoutMs: 0, searchPath: ['x; drop'] }),
    );
    expect(error.code).toBe('validation');
    expect(error.message).toContain('timeoutMs');
    expect(error.message).toContain('searchPath.0');
  });

  // PGlite runs queries without timer interrupts, so statement_timeout only fires on a server.
  it.runIf(testServerUrl)('cancels a statement that outlives its timeout', async () => {
    const error = await rejection(store.runReadOnlyQuery({ sql: 'select pg_sleep(5)', timeoutMs: 100 }));
    expect(error.code).toBe('query-failed');
    expect(error.message).toContain('57014'); // query_canceled
  });
});
