import { PGlite } from '@electric-sql/pglite';
let t = performance.now();
const admin = new PGlite();
await admin.exec(`create schema sample; create table sample.t(id int, v text); insert into sample.t values (1,'a'),(2,'b');
create role rdr login; grant usage on schema sample to rdr; grant select on all tables in schema sample to rdr;
revoke all on schema public from public; revoke execute on function lo_creat(int) from public;
alter role rdr set search_path = sample; alter role rdr set default_transaction_read_only = on;`);
const dump = await admin.dumpDataDir('none');
console.log('build ms', performance.now() - t, 'dump bytes', dump.size);
await admin.close();
t = performance.now();
const r = new PGlite({ loadDataDir: dump, username: 'rdr' });
await r.waitReady;
console.log('load ms', performance.now() - t);
const q = async (s, p) => {
  try {
    const x = await r.query(s, p, { rowMode: 'array' });
    console.log(
      s.slice(0, 60),
      '->',
      JSON.stringify(x.rows).slice(0, 100),
      x.fields.map((f) => f.dataTypeID),
    );
  } catch (e) {
    console.log(s.slice(0, 60), 'ERR', e.code, e.message);
  }
};
await q(
  "select current_user, session_user, current_setting('search_path'), current_setting('default_transaction_read_only')",
);
await q('select * from t');
await q('select lo_creat(-1)');
await q('select pg_advisory_lock(1)');
await q('select count(*) from pg_authid');
await q('select 1; select 2', []);
await q('select 1; select 2', [1]);
await q('begin read only');
await q(
  'select sum(x) over (rows between unbounded preceding and current row) from generate_series(1, 1000000000000) x limit 3',
);
await q('declare c no scroll cursor for select * from generate_series(1, 1000000000000) x');
await q('fetch forward 3 from c');
await q('rollback');
await q('set statement_timeout = 100');
t = performance.now();
await q('select pg_sleep(0.5)');
console.log('sleep ms', performance.now() - t);
t = performance.now();
await q("select length(repeat('x', 200000000))");
console.log('repeat ms', performance.now() - t);
await q('discard all');
await q('select 1::int8, 1.5::numeric, now()::date, true, array[1,2], \'{"a":1}\'::jsonb');
