// scripts/with-node.sh, which `npm test` and `npm run demo` run through: it keeps a new enough node on
// PATH as it is, and in front of an older one puts the pinned Node 22 from scripts/setup-node.sh's
// cache, saying nothing. The cache here is a temporary one holding this process's own node, so nothing
// is fetched (the fetch itself runs in .ci/run on a machine with an older Node, and at its `npm ci`).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');
const pinned = /node_version='([\d.]+)'/.exec(readFileSync(join(repo, 'scripts/setup-node.sh'), 'utf8'))?.[1];
const work = mkdtempSync(join(tmpdir(), 'edgerl-with-node-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

function withNode(path: string, cache: string) {
  const run = spawnSync('bash', [join(repo, 'scripts/with-node.sh'), 'node', '-p', 'process.version'], {
    cwd: repo,
    env: { ...process.env, PATH: path, XDG_CACHE_HOME: cache },
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout.trim(), stderr: run.stderr.trim() };
}

describe('scripts/with-node.sh', () => {
  it('runs the command on the node first on PATH when it is 22.12 or newer, quietly', () => {
    const ran = withNode(`${dirname(process.execPath)}:/usr/bin:/bin`, join(work, 'empty-cache'));
    expect(ran).toEqual({ code: 0, stdout: process.version, stderr: '' });
  });

  it("puts the cached Node 22 in front of an older node, and refuses a cached one that is not the pin's", () => {
    // An "older node": it fails the floor check (`node -e …` exits 1) as Node 20 does.
    const old = join(work, 'old-node');
    mkdirSync(old);
    writeFileSync(join(old, 'node'), '#!/bin/sh\n[ "$1" = --version ] && echo v20.0.0 && exit 0\nexit 1\n');
    chmodSync(join(old, 'node'), 0o755);
    const platform = `${process.platform === 'darwin' ? 'darwin' : 'linux'}-${process.arch}`;
    const cache = join(work, 'cache');
    const bin = join(cache, 'edgerl', `node-${platform}-${pinned}`, 'package', 'bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(process.execPath, join(bin, 'node'));
    const ran = withNode(`${old}:/usr/bin:/bin`, cache);
    if (process.version === `v${pinned}`) {
      expect(ran).toEqual({ code: 0, stdout: process.version, stderr: '' });
    } else {
      // This machine's Node 22 is not the pinned release, so the stand-in in the cache is refused.
      expect(ran.code).not.toBe(0);
      expect(ran.stderr).toContain(`is ${process.version}, expected v${pinned}`);
    }
  });
});
