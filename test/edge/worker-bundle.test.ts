// The Worker as wrangler bundles it for deployment (`wrangler deploy --dry-run`, offline, minified as
// wrangler.toml asks): it builds, stays within Workers' size limit, is as big as docs/workers.md says, and
// pulls in none of the Node-only store code (PGlite, pg-native, our fs users). node-postgres is in it for
// the HYPERDRIVE binding (db/drivers/open-hyperdrive-store.ts).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueMaxDeliveries } from '../../edge/rollouts/queue-delivery.ts';

const run = promisify(execFile);
let dir: string;
let bundle: string;
let sources: string[];
let contents: (string | null)[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgerl-bundle-'));
  await run(
    process.execPath,
    ['node_modules/wrangler/bin/wrangler.js', 'deploy', '--dry-run', '--outdir', dir],
    {
      env: {
        ...process.env,
        CLOUDFLARE_CF_FETCH_ENABLED: 'false',
        WRANGLER_SEND_METRICS: 'false',
        NO_COLOR: '1',
      },
      timeout: 120_000,
    },
  );
  bundle = await readFile(join(dir, 'worker.js'), 'utf8');
  const map = JSON.parse(await readFile(join(dir, 'worker.js.map'), 'utf8')) as {
    sources: string[];
    sourcesContent?: (string | null)[];
  };
  sources = map.sources;
  contents = map.sourcesContent ?? [];
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the Worker bundle', () => {
  it('leaves out PGlite, pg-native and the Node-only store and edge files; holds both Worker drivers', () => {
    const forbidden = sources.filter((source) =>
      /@electric-sql\/pglite|node_modules\/pg-native\/|open-store\.ts|dir-lock\.ts|edge\/node\.ts|dev-tunnel\.ts/.test(
        source,
      ),
    );
    expect(forbidden).toEqual([]);
    expect(sources.some((source) => source.endsWith('edge/runtime/worker.ts'))).toBe(true);
    expect(sources.some((source) => source.includes('@neondatabase/serverless'))).toBe(true);
    expect(sources.some((source) => source.endsWith('db/drivers/open-hyperdrive-store.ts'))).toBe(true);
    // pg's socket for workerd (cloudflare:sockets), which pg picks at run time (pg/lib/stream.js).
    expect(sources.some((source) => source.includes('node_modules/pg-cloudflare/'))).toBe(true);
  });

  it('reads files only where pg does on paths a Hyperdrive connection string never takes', () => {
    // pg-connection-string loads fs only for sslcert/sslkey/sslrootcert parameters, and pgpass
    // (~/.pgpass) only when a server asks for a password the connection string lacks; Hyperdrive's
    // strings carry a password and no file paths. Anything else reaching for fs is ours to remove.
    const readsFiles =
      /require\(\s*["'](node:)?fs["']\s*\)|from\s*["'](node:)?fs["']|import\(\s*["'](node:)?fs["']\s*\)/;
    const users = sources
      .filter(
        (source, index) =>
          !source.startsWith('node-built-in-modules:') && readsFiles.test(contents[index] ?? ''),
      )
      .map((source) => source.replace(/^.*node_modules\//, ''));
    expect(contents.length).toBe(sources.length);
    expect(users.sort()).toEqual(['pg-connection-string/index.js', 'pgpass/lib/index.js']);
  });

  it("fits the Workers free plan's 3 MB compressed script limit", () => {
    // https://developers.cloudflare.com/workers/platform/limits/#worker-size
    expect(gzipSync(bundle).length).toBeLessThan(3 * 1024 * 1024);
  });

  it('is minified and as big as docs/workers.md says, within 10 %', async () => {
    const raw = Buffer.byteLength(bundle);
    const gzipped = gzipSync(bundle).length;
    const documented = documentedBundleSize(await readFile('docs/workers.md', 'utf8'));
    const measured = `measured ${(raw / 1e6).toFixed(2)} MB, ${Math.round(gzipped / 1e3)} kB gzipped`;
    // Minified lines average about 600 bytes here (line breaks left are inside strings); esbuild's
    // unminified output has one per statement, about 40 bytes each (57,439 lines in 2.2 MB).
    expect(bundle.split('\n').length, measured).toBeLessThan(raw / 200);
    expect(Math.abs(documented.raw / raw - 1), measured).toBeLessThanOrEqual(0.1);
    expect(Math.abs(documented.gzipped / gzipped - 1), measured).toBeLessThanOrEqual(0.1);
  });
});

/** The figures in docs/workers.md's "bundle … about 1.31 MB (366 kB gzipped", in bytes (decimal units). */
function documentedBundleSize(markdown: string): { raw: number; gzipped: number } {
  const match = /bundle[^.]*?about\s+([\d.]+)\s+MB\s+\((\d+)\s+kB\s+gzipped\b/.exec(markdown);
  if (!match)
    throw new Error('docs/workers.md no longer states the bundle size as "about N MB (N kB gzipped)"');
  return { raw: Number(match[1]) * 1e6, gzipped: Number(match[2]) * 1e3 };
}

/** The newest compatibility date a workerd package accepts (its main module's `compatibilityDate`). */
function workerdDate(from: string): string {
  const workerd = createRequire(from)('workerd') as { compatibilityDate: string };
  return workerd.compatibilityDate;
}

/** The key lines of a TOML file's first [[table]], comments and blank lines dropped. */
function tableLines(toml: string, table: string): string[] {
  const start = toml.indexOf(`[[${table}]]`);
  if (start < 0) return [];
  const lines = toml.slice(start).split('\n').slice(1);
  const end = lines.findIndex((line) => line.startsWith('['));
  return (end < 0 ? lines : lines.slice(0, end))
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

describe('wrangler.toml', () => {
  it('matches what the code assumes: delivery limit, minified, and a date both pinned workerds accept', async () => {
    const toml = await readFile('wrangler.toml', 'utf8');
    const retries = Number(/^max_retries\s*=\s*(\d+)/m.exec(toml)?.[1]);
    expect(queueMaxDeliveries).toBe(retries + 1);
    // wrangler deploys with its own workerd; the Worker tests run in the pool's (its own wrangler's
    // miniflare), which falls back to its newest date, with a warning, for a later one.
    const deploys = workerdDate(createRequire(`${process.cwd()}/package.json`).resolve('wrangler'));
    const pool = createRequire(`${process.cwd()}/node_modules/@cloudflare/vitest-plugin/package.json`);
    const tests = workerdDate(pool.resolve('miniflare'));
    const date = /^compatibility_date\s*=\s*"([\d-]+)"/m.exec(toml)?.[1] ?? '';
    expect(date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(date <= deploys && date <= tests, `${date} vs ${deploys} (wrangler), ${tests} (pool)`).toBe(true);
    expect(toml).toMatch(/^minify = true$/m);
    expect(toml).toMatch(/^upload_source_maps = true$/m);
    expect(toml).toMatch(/binding = "EPISODES"/);
  });

  it('is what the Hyperdrive workerd tests run, plus their [[hyperdrive]] block', async () => {
    // test/workerd/hyperdrive/wrangler.toml repeats the queues (wrangler has no `extends`).
    const main = await readFile('wrangler.toml', 'utf8');
    const hyperdrive = await readFile('test/workerd/hyperdrive/wrangler.toml', 'utf8');
    for (const table of ['queues.producers', 'queues.consumers']) {
      expect(tableLines(hyperdrive, table)).toEqual(tableLines(main, table));
      expect(tableLines(main, table).length).toBeGreaterThan(0);
    }
    expect(hyperdrive).toMatch(/^\[\[hyperdrive\]\]\nbinding = "HYPERDRIVE"$/m);
    expect(/^compatibility_date.*$/m.exec(hyperdrive)?.[0]).toBe(/^compatibility_date.*$/m.exec(main)?.[0]);
  });
});
