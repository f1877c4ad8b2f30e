// `edgerl db migrate` and `edgerl sql`, run through the CLI dispatcher
// against an embedded store in a temporary directory (or a temporary server database).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { embeddedMigrations } from '../../db/embedded-migrations.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';

let dir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgerl-cli-store-'));
  database = testServerUrl ? await createTestDatabase(testServerUrl) : undefined;
  env = database ? { DATABASE_URL: database.url } : { EDGERL_DATA_DIR: join(dir, 'pgdata') };
});
afterAll(async () => {
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => (out += chunk));
  stderr.on('data', (chunk) => (err += chunk));
  const code = await main(args, { stdout, stderr, env });
  return { code, out, err };
}

describe('edgerl db migrate', () => {
  it('applies every migration once, then reports the database up to date', async () => {
    const total = embeddedMigrations.length;
    const first = await run(['db', 'migrate']);
    expect(first.err).toBe('');
    const tags = embeddedMigrations.map((migration) => migration.tag).join(', ');
    expect(first.out).toContain(`applied ${total} of ${total} migrations (${tags})`);
    expect(tags).toMatch(/^0000_init, 0001_views, 0002_sample_database/);
    const second = await run(['db', 'migrate']);
    expect(second.out).toContain(`up to date (${total} migrations)`);
  });
});

describe('edgerl sql', () => {
  it('prints an aligned table with numbers right-aligned and a row count', async () => {
    const { code, out } = await run([
      'sql',
      "select n as id, 'item ' || repeat('x', n * 5) as name, (n * 39.75)::numeric(10, 2) as price from generate_series(1, 2) n",
    ]);
    expect(code).toBe(0);
    expect(out).toBe(
      [
        ' id |      name       | price',
        '----+-----------------+-------',
        '  1 | item xxxxx      | 39.75',
        '  2 | item xxxxxxxxxx | 79.50',
        '(2 rows)',
        '',
      ].join('\n'),
    );
  });

  it('prints JSON and CSV', async () => {
    const json = await run(['sql', "select 1 as a, null as b, 'x' as c", '--json']);
    expect(JSON.parse(json.out)).toEqual([{ a: 1, b: null, c: 'x' }]);
    const csv = await run(['sql', `select 'a,b' as x, 'say "hi"' as y, null as z`, '--csv']);
    expect(csv.out).toBe('x,y,z\r\n"a,b","say ""hi""",\r\n');
  });

  it('reports a Postgres error on one line with its SQLSTATE and exits 1', async () => {
    const { code, err } = await run(['sql', 'select nope from policies']);
    expect(code).toBe(1);
    expect(err).toBe('edgerl sql: column "nope" does not exist (SQLSTATE 42703)\n');
  });

  it('rejects bad usage and bad URLs with exit codes 2 and 1', async () => {
    expect((await run(['sql'])).code).toBe(2);
    expect((await run(['sql', 'select 1', '--json', '--csv'])).code).toBe(2);
    const badUrl = await run(['sql', 'select 1', '--database-url', 'mysql://h/db']);
    expect(badUrl.code).toBe(1);
    expect(badUrl.err).toMatch(/^edgerl sql: unsupported database URL scheme "mysql:"[^\n]*\n$/);
  });

  it('still takes the former --url, and says so in one line', async () => {
    const former = await run(['sql', 'select 1', '--url', 'mysql://h/db']);
    expect(former.code).toBe(1);
    expect(former.err).toMatch(
      /^edgerl sql: deprecated names, still read for now: --url → --database-url\nedgerl sql: unsupported database URL scheme "mysql:"[^\n]*\n$/,
    );
  });
});
