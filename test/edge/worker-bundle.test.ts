// The Worker as wrangler bundles it for deployment (`wrangler deploy --dry-run`, offline): it builds,
// stays within Workers' size limit, and pulls in none of the Node-only store code (PGlite, pg, fs).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
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
  sources = (JSON.parse(await readFile(join(dir, 'worker.js.map'), 'utf8')) as { sources: string[] }).sources;
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the Worker bundle', () => {
  it('leaves out PGlite, node-postgres and the Node-only store and edge files', () => {
    const forbidden = sources.filter((source) =>
      /@electric-sql\/pglite|node_modules\/pg\/|node_modules\/pg-|open-store\.ts|dir-lock\.ts|edge\/node\.ts|dev-tunnel\.ts/.test(
        source,
      ),
    );
    expect(forbidden).toEqual([]);
    expect(sources.some((source) => source.endsWith('edge/runtime/worker.ts'))).toBe(true);
    expect(sources.some((source) => source.includes('@neondatabase/serverless'))).toBe(true);
    expect(bundle).not.toMatch(/from\s*["'](node:)?fs["']/);
  });

  it("fits the Workers free plan's 3 MB compressed script limit", () => {
    expect(gzipSync(bundle).length).toBeLessThan(3 * 1024 * 1024);
  });
});

describe('wrangler.toml', () => {
  it('matches what the code assumes: delivery limit and a date the pinned workerd accepts', async () => {
    const toml = await readFile('wrangler.toml', 'utf8');
    const retries = Number(/^max_retries\s*=\s*(\d+)/m.exec(toml)?.[1]);
    expect(queueMaxDeliveries).toBe(retries + 1);
    // workerd 1.20260426 (wrangler 4.86.0, the last release for Node 20) supports dates up to 2026-05-03.
    const date = /^compatibility_date\s*=\s*"([\d-]+)"/m.exec(toml)?.[1] ?? '';
    expect(date <= '2026-05-03').toBe(true);
    expect(toml).toMatch(/binding = "EPISODES"/);
  });
});
