// `edgerl console`'s own checks before it serves: a console without keys on a non-loopback interface
// is refused, and --export writes the static export of the store it names.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../main.ts';

async function run(args: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const stream = (append: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await main(['console', ...args], {
    stdout: stream((text) => {
      out += text;
    }),
    stderr: stream((text) => {
      err += text;
    }),
    env,
  });
  return { code, out, err };
}

describe('edgerl console', () => {
  it('refuses to serve other machines without EDGERL_EDGE_API_KEYS', async () => {
    const { code, err } = await run(['--host', '0.0.0.0', '--database-url', 'memory://']);
    expect(code).toBe(2);
    expect(err).toMatch(/EDGERL_EDGE_API_KEYS/);
  });

  it('writes the static export of the store and exits', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'edgerl-console-export-'));
    try {
      const { code, out } = await run(['--database-url', 'memory://', '--export', join(dir, 'site')]);
      expect(code).toBe(0);
      expect(out).toMatch(/wrote \d+ files \(0 runs, 0 groups, 0 trajectories, 0 experiments\)/);
      expect((await readdir(join(dir, 'site'))).sort()).toEqual([
        'assets',
        'experiments.html',
        'groups.html',
        'index.html',
        'policies.html',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
