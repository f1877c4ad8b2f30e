// The experiment page shows the numbers `edgerl ab report` prints: the command's own output, run on
// the same embedded store, is the text under the page's tables, character for character.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../main.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import { seedConsoleStore } from '../../test/support/seed-console.ts';
import { createConsoleServer } from '../../console/console-server.ts';

let dir: string;
let experiment: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgerl-console-ab-'));
  const store = await openStore({ dataDir: join(dir, 'pgdata') });
  try {
    experiment = (await seedConsoleStore(store)).experimentName;
  } finally {
    await store.close();
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function cliReport(args: string[]): Promise<string> {
  let out = '';
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      out += String(chunk);
      done();
    },
  });
  const code = await main(['ab', 'report', experiment, ...args], {
    stdout,
    stderr: stdout,
    env: { EDGERL_DATA_DIR: join(dir, 'pgdata') },
  });
  expect(code, out).toBe(0);
  return out;
}

async function pageReport(query: string): Promise<string> {
  const store = await openStore({ dataDir: join(dir, 'pgdata') });
  try {
    const app = createConsoleServer({
      stores: { open: async () => ({ store, release: async () => {} }) },
      access: { kind: 'loopback' },
    });
    const page = await (
      await app.request(`http://127.0.0.1/console/experiments/${experiment}${query}`)
    ).text();
    const pre = /<pre class="report">([\s\S]*?)<\/pre>/.exec(page)?.[1] ?? '';
    return pre
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&');
  } finally {
    await store.close();
  }
}

describe('the experiment page and edgerl ab report', () => {
  it('show the same report', async () => {
    const cli = await cliReport([]);
    expect(cli).toMatch(/Verdict:/);
    expect(await pageReport('')).toBe(cli);
  });

  it('show the same report for a split and a reward source', async () => {
    const cli = await cliReport(['--split', 'eval', '--reward', 'verifier']);
    // The command adds a line naming the scope; the report above it is the page's.
    expect(cli.endsWith('(eval tasks only, reward: verifier)\n')).toBe(true);
    expect(`${await pageReport('?split=eval&reward=verifier')}(eval tasks only, reward: verifier)\n`).toBe(
      cli,
    );
  });
});
