// The SQL agent's query tool against a hostile corpus, on the embedded sandbox and (with
// EDGERL_TEST_DATABASE_URL) on a server sandbox provisioned by setupSandbox into a fresh database with a
// per-test reader role. Every query goes through the environment's own `query` tool (the text check,
// then the sandbox); afterwards the side effects are counted from the database itself: sessions
// killed, large objects, advisory locks, prepared statements, cursors, temp tables, notifications,
// changed settings, changed sample rows, and the trajectory store (a separate database) untouched.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlAgent } from '../../edge/environments/sql-agent/sql-agent.ts';
import { type SqlTask, sqlTasks } from '../../edge/environments/sql-agent/sql-tasks.ts';
import { ToolRefusal } from '../../edge/environments/tool-refusal.ts';
import { isQueryFault, sqlStateOf } from '../../edge/environments/sql-agent/sql-error.ts';
import type { ReadOnlySql } from '../../protocol/read-only-sql.ts';
import { embeddedReadOnlySql } from '../../sandbox/node/embedded-read-only-sql.ts';
import { serverReadOnlySql } from '../../sandbox/node/server-read-only-sql.ts';
import { makeGroup } from '../support/fixtures.ts';
import { openTestStore, type TestStore, testServerUrl } from '../support/open-test-store.ts';
import { createTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { startEdgeHarness } from '../edge/support/edge-harness.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';

type Outcome = 'answered' | 'refused' | 'failed' | 'infrastructure';

/** `answer`: may come back, bounded; `refuse`: must not come back with rows (refused or failed). */
interface Hostile {
  readonly sql: string;
  readonly must: 'answer' | 'refuse';
}

/** `$PID` is the sentinel session's backend pid (a reader connection the corpus tries to kill). */
function corpus(): Hostile[] {
  const refuse = (sql: string): Hostile => ({ sql, must: 'refuse' });
  const answer = (sql: string): Hostile => ({ sql, must: 'answer' });
  return [
    // Other sessions: signals, and their query text.
    refuse('select pg_catalog.pg_terminate_backend($PID)'),
    refuse('select "pg_catalog"."pg_terminate_backend"($PID)'),
    refuse('select PG_CATALOG.Pg_Terminate_Backend($PID)'),
    refuse('select pg_catalog.pg_cancel_backend($PID)'),
    refuse('select u&"pg_\\0074erminate_backend"($PID)'),
    refuse('select p, pg_catalog.pg_terminate_backend(p) from generate_series($PID, $PID) p'),
    refuse('select query from pg_stat_activity'),
    refuse('select query from pg_catalog.pg_stat_get_activity(null)'),
    // Large objects.
    refuse('select pg_catalog.lo_creat(-1)'),
    refuse('select "pg_catalog"."lo_creat"(-1)'),
    refuse('select PG_CATALOG.Lo_Creat(-1)'),
    refuse('select pg_catalog.lo_create(0)'),
    refuse("select pg_catalog.lo_from_bytea(0, '\\x41'::bytea)"),
    refuse("select pg_catalog.lo_import('/etc/passwd')"),
    refuse("select pg_catalog.lo_export(1, '/tmp/edgerl-x')"),
    refuse('select u&"lo_\\0063reat"(-1)'),
    refuse('select pg_catalog.lo_unlink(1)'),
    // Server files.
    refuse("select pg_catalog.pg_read_file('/etc/passwd')"),
    refuse("select pg_catalog.pg_read_binary_file('/etc/hostname')"),
    refuse("select pg_catalog.pg_ls_dir('.')"),
    refuse("select pg_catalog.pg_stat_file('/etc/passwd')"),
    refuse('select * from pg_catalog.pg_ls_waldir()'),
    // Advisory locks, session level (they would outlive a rollback).
    refuse('select pg_catalog.pg_advisory_lock(42)'),
    refuse('select pg_catalog.pg_try_advisory_lock(42)'),
    refuse('select pg_catalog.pg_advisory_lock_shared(7, 8)'),
    refuse('select "pg_catalog"."pg_try_advisory_lock_shared"(43)'),
    // Notifications.
    refuse("select pg_catalog.pg_notify('edgerl_probe', 'from the corpus')"),
    refuse("notify edgerl_probe, 'x'"),
    refuse('listen edgerl_probe'),
    // Settings that would persist into later queries or the store's connections.
    refuse("select pg_catalog.set_config('search_path', 'public', false)"),
    refuse("select pg_catalog.set_config('role', 'postgres', false)"),
    refuse("select set_config('statement_timeout', '0', false)"),
    refuse('set search_path = public'),
    refuse("select 1 as x from (select pg_catalog.set_config('work_mem', '1GB', false)) s"),
    // Statements that are not queries.
    refuse('do $$ begin perform pg_sleep(5); end $$'),
    refuse('call pg_catalog.pg_sleep(1)'),
    refuse('prepare edgerl_p as select 1'),
    refuse('execute edgerl_p'),
    refuse('create temp table edgerl_t as select 1'),
    refuse("copy (select 1) to program 'touch /tmp/edgerl-pwned'"),
    refuse("copy (select 1) to '/tmp/edgerl-pwned'"),
    refuse('delete from order_items'),
    refuse('update products set price = 0'),
    refuse(
      "insert into customers (id, name, email, city, country, signed_up_on) values (99, 'e', 'e@x', 'c', 'c', '2024-01-01')",
    ),
    refuse('truncate orders'),
    refuse('drop table orders'),
    refuse('begin'),
    refuse('commit'),
    refuse('savepoint s'),
    refuse('rollback'),
    // Hidden statements: dollar tricks, comments, several statements.
    refuse('select 1 as é$a$; commit; delete from sample.order_items where true; select 1 as é$a$'),
    refuse('select 1; delete from order_items'),
    refuse('select 1 /* ; */ ; /* nested /* ; */ */ delete from order_items'),
    refuse('select 1 -- ;\n; delete from order_items'),
    refuse('select $x$;$x$; delete from order_items'),
    refuse('with gone as (delete from order_items returning 1) select count(*) from gone'),
    refuse('select * from orders for update'),
    refuse('select * from orders for share'),
    // The store and the catalog's secrets.
    refuse('select * from public.turns'),
    refuse('select * from turns'),
    refuse('select * from policy_versions'),
    refuse('select rolpassword from pg_authid'),
    refuse('select passwd from pg_shadow'),
    refuse("select * from pg_catalog.query_to_xml('select rolpassword from pg_authid', true, true, '')"),
    refuse("select pg_catalog.ts_stat('select 1')"),
    refuse("select * from dblink('dbname=postgres', 'select 1') as t(a int)"),
    // Transaction ids burnt and snapshots exported: refused by name, and by privilege when spelt so
    // the text check lets them through (qualified or quoted).
    refuse('select txid_current()'),
    refuse('select pg_catalog.txid_current()'),
    refuse('select "pg_catalog"."txid_current"() from generate_series(1, 1000)'),
    refuse('select pg_current_xact_id()'),
    refuse('select pg_catalog.pg_current_xact_id()'),
    refuse('select pg_export_snapshot()'),
    refuse('select pg_catalog.pg_export_snapshot()'),
    // The server beyond the shop: its databases, roles, locks and sessions.
    refuse('select datname from pg_database'),
    refuse('select datname from "pg_database"'),
    refuse('select datname from "pg_catalog"."pg_stat_database"'),
    refuse('select rolname from pg_roles'),
    refuse('select rolname from "pg_roles"'),
    refuse('select usename from "pg_user"'),
    refuse('select groname from "pg_group"'),
    refuse('select roleid from "pg_auth_members"'),
    refuse('select locktype from pg_locks'),
    refuse('select locktype from "pg_locks"'),
    refuse('select * from pg_catalog.pg_lock_status()'),
    refuse('select pid from "pg_stat_activity"'),
    refuse('select pid from "pg_stat_ssl"'),
    // Time and size: bounded by the timeout, the row cap or the byte cap.
    refuse('select pg_catalog.pg_sleep(30)'),
    refuse("select pg_sleep_for('30 seconds')"),
    refuse('with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r'),
    refuse(
      'select count(*) from customers a, customers b, customers c, customers d, customers e, products f',
    ),
    refuse("select repeat('x', 500000000)"),
    answer('with recursive r(n) as (select 1 union all select n + 1 from r) select n from r'),
    answer('select generate_series(1, 1000000000000)'),
    answer("select generate_series(1, 1000000000) as n, repeat('x', 100000) as filler"),
    answer('select count(*) from customers'),
  ];
}

const task = sqlTasks[0] as SqlTask;
const queryTool = sqlAgent.tools.find((tool) => tool.name === 'query');
if (!queryTool) throw new Error('sql-agent has no query tool');

/** The tool's own path: argument check, text check, sandbox; the observation or what it threw. */
async function runTool(sql: ReadOnlySql, text: string): Promise<{ outcome: Outcome; detail: string }> {
  try {
    const observation = await queryTool?.run(
      { sql: text },
      { sql, task, signal: new AbortController().signal },
    );
    return { outcome: 'answered', detail: String(observation).slice(0, 200) };
  } catch (error) {
    if (error instanceof ToolRefusal) return { outcome: 'refused', detail: error.message };
    if (isQueryFault(sqlStateOf(error))) return { outcome: 'failed', detail: String(error) };
    return { outcome: 'infrastructure', detail: String(error) };
  }
}

/** How a backend is inspected afterwards: as an admin on a server, through the reader when embedded. */
interface Inspector {
  value(sql: string): Promise<unknown>;
}

interface Backend {
  readonly name: string;
  readonly sql: ReadOnlySql & { close(): Promise<void> };
  readonly inspector: Inspector;
  /** A reader session the corpus tries to kill, and whether it is still alive. */
  readonly sentinelPid: number | undefined;
  sentinelAlive(): Promise<boolean>;
  /** Notifications a listener on `edgerl_probe` received. */
  notifications(): number;
  /** Advisory locks held, or undefined where nobody may look (the embedded sandbox has no admin session). */
  advisoryLocks(): Promise<number | undefined>;
  close(): Promise<void>;
}

async function embeddedBackend(): Promise<Backend> {
  const sql = embeddedReadOnlySql();
  const inspector: Inspector = {
    async value(text) {
      const result = await sql.query(text, { timeoutMs: 30_000, maxRows: 10 });
      return result.rows[0]?.[0];
    },
  };
  return {
    name: 'embedded',
    sql,
    inspector,
    // One backend only: the worker itself is the session that must survive.
    sentinelPid: undefined,
    sentinelAlive: async () => (await inspector.value('select 1')) === 1,
    notifications: () => 0,
    // The reader may neither take advisory locks nor read pg_locks (both revoked), and the worker's
    // one backend is the reader's: there is no session left to look from. DISCARD ALL after every
    // query (embedded-read-only-sql.ts) also drops any a query took.
    advisoryLocks: async () => undefined,
    close: () => sql.close(),
  };
}

async function serverBackend(sandbox: TestSandbox): Promise<Backend> {
  const admin = new pg.Client({ connectionString: sandbox.adminUrl });
  await admin.connect();
  let received = 0;
  admin.on('notification', () => {
    received += 1;
  });
  await admin.query('listen edgerl_probe');
  const sentinel = new pg.Client({ connectionString: sandbox.readerUrl });
  await sentinel.connect();
  sentinel.on('error', () => {});
  const pid = (await sentinel.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
  const sql = serverReadOnlySql({ url: sandbox.readerUrl });
  return {
    name: 'server',
    sql,
    inspector: { value: async (text) => Object.values((await admin.query(text)).rows[0] ?? {})[0] },
    sentinelPid: pid,
    async sentinelAlive() {
      try {
        return (await sentinel.query('select 1 as one')).rows[0]?.one === 1;
      } catch {
        return false;
      }
    },
    notifications: () => received,
    advisoryLocks: async () =>
      Number(
        Object.values(
          (await admin.query("select count(*) from pg_locks where locktype = 'advisory'")).rows[0] ?? {},
        )[0],
      ),
    async close() {
      await sql.close();
      await sentinel.end().catch(() => {});
      await admin.end();
    },
  };
}

const sampleChecksum = `select md5(string_agg(x, '|' order by x)) from (
  select 'c' || c::text as x from sample.customers c union all select 'p' || p::text from sample.products p
  union all select 'o' || o::text from sample.orders o union all select 'i' || i::text from sample.order_items i) s`;

const settingsProbe =
  "select current_user || ' ' || current_setting('search_path') || ' ' || current_setting('work_mem') || ' ' || current_setting('transaction_read_only')";

const storeChecksum = `select (select count(*) from turns) || '/' || (select count(*) from trajectories) || '/' ||
  (select count(*) from policies) || '/' || (select count(*) from tasks)`;

const backends: { name: string; open: () => Promise<{ backend: Backend; drop?: () => Promise<void> }> }[] = [
  { name: 'embedded', open: async () => ({ backend: await embeddedBackend() }) },
  // The server sandbox needs the Postgres server (a second database and role beside the store's).
  ...(testServerUrl
    ? [
        {
          name: 'server',
          open: async () => {
            const sandbox = await createTestSandbox(testServerUrl as string);
            // Every revoke took (the test server's admin is a superuser, the grantor of the built-ins).
            expect({ functions: sandbox.stillExecutable, catalogs: sandbox.stillReadable }).toEqual({
              functions: [],
              catalogs: [],
            });
            return { backend: await serverBackend(sandbox), drop: () => sandbox.drop() };
          },
        },
      ]
    : []),
];

describe.each(backends)('the SQL tool on the $name sandbox, against a hostile corpus', ({ open }) => {
  let backend: Backend;
  let drop: (() => Promise<void>) | undefined;
  let store: TestStore;

  beforeAll(async () => {
    ({ backend, drop } = await open());
    store = await openTestStore();
    // Rows the corpus must not reach: the store is another database.
    await makeGroup(store.store, { size: 2 });
  });
  afterAll(async () => {
    await backend?.close();
    await drop?.();
    await store?.close();
  });

  it('refuses or bounds every query, and nothing it tried survives', async (context) => {
    const before = {
      sample: await backend.inspector.value(sampleChecksum),
      settings: (await backend.sql.query(settingsProbe, { timeoutMs: 30_000, maxRows: 1 })).rows[0]?.[0],
      store: (await store.store.sql.query(storeChecksum)).rows[0]?.[0],
    };
    const queries = corpus();
    expect(queries.length).toBeGreaterThanOrEqual(60);
    const wrong: string[] = [];
    for (const query of queries) {
      const text = query.sql.replaceAll('$PID', String(backend.sentinelPid ?? 'pg_backend_pid()'));
      const { outcome, detail } = await runTool(backend.sql, text);
      const ok =
        query.must === 'answer' ? outcome === 'answered' : outcome === 'refused' || outcome === 'failed';
      if (!ok) wrong.push(`${query.must} but ${outcome}: ${text} → ${detail}`);
      if (outcome === 'answered') expect(detail.length).toBeLessThanOrEqual(200);
    }
    expect(wrong).toEqual([]);

    // Side effects, counted from the database afterwards.
    const found: string[] = [];
    const check = (name: string, ok: boolean) => {
      if (!ok) found.push(name);
    };
    check('sentinel session killed', await backend.sentinelAlive());
    check(
      'large objects left',
      Number(await backend.inspector.value('select count(*) from pg_largeobject_metadata')) === 0,
    );
    const advisoryLocks = await backend.advisoryLocks();
    if (advisoryLocks !== undefined) check('advisory locks held', advisoryLocks === 0);
    check(
      'temp tables left',
      Number(await backend.inspector.value("select count(*) from pg_class where relpersistence = 't'")) === 0,
    );
    // Prepared statements and cursors are per session: asked through the tool's own connections.
    for (let attempt = 0; attempt < 4; attempt++) {
      const left = await backend.sql.query(
        // The check's own cursor and the portal fetching from it are the two names left out.
        "select (select count(*) from pg_prepared_statements) + (select count(*) from pg_cursors where name not in ('', 'edgerl_sandbox_rows'))",
        { timeoutMs: 30_000, maxRows: 1 },
      );
      check('prepared statements or cursors left', Number(left.rows[0]?.[0]) === 0);
    }
    check('a notification was delivered', backend.notifications() === 0);
    check('sample rows changed', (await backend.inspector.value(sampleChecksum)) === before.sample);
    const settingsAfter = (await backend.sql.query(settingsProbe, { timeoutMs: 30_000, maxRows: 1 }))
      .rows[0]?.[0];
    check('session settings changed', settingsAfter === before.settings);
    check('the store changed', (await store.store.sql.query(storeChecksum)).rows[0]?.[0] === before.store);
    recordFaultOutcome(context, { lostTurns: 0, duplicates: 0, leaks: found.length });
    expect(found).toEqual([]);
    expect(before.settings).toMatch(/^edgerl_sql_reader\S* sample 4MB on$/);
  });
});

describe("the embedded sandbox off the edge's event loop", () => {
  it('answers /health while a query sleeps, then refuses the query as a timeout, and the next one works', async (context) => {
    const harness = await startEdgeHarness();
    try {
      const { edge } = harness;
      // A warm sandbox first, so the sleep below is the query's time, not the worker's start.
      expect((await runTool(edge.sql, 'select count(*) from customers')).outcome).toBe('answered');
      const order: string[] = [];
      const sleeping = runTool(edge.sql, 'select pg_catalog.pg_sleep(30)').then((result) => {
        order.push('query');
        return result;
      });
      const started = performance.now();
      const health = await fetch(`${edge.url}/health`);
      order.push('health');
      const healthMs = performance.now() - started;
      const slept = await sleeping;
      expect(health.status).toBe(200);
      // Measured, not asserted: how long /health took while the query ran.
      context.annotate(`/health answered in ${Math.round(healthMs)} ms during pg_sleep(30)`);
      expect(order).toEqual(['health', 'query']);
      expect(slept).toEqual({
        outcome: 'refused',
        detail: 'the query was cancelled after running 1000 ms; make it cheaper',
      });
      expect(await runTool(edge.sql, 'select count(*) from products')).toMatchObject({ outcome: 'answered' });
      recordFaultOutcome(context, { lostTurns: 0, duplicates: 0, leaks: 0 });
    } finally {
      await harness.close();
    }
  });
});
