import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockDataDir } from './dir-lock.ts';

const dir = mkdtempSync(join(tmpdir(), 'edgerl-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('lockDataDir', () => {
  it('lets one opener at a time hold a data directory', () => {
    const dataDir = join(dir, 'a');
    const lock = lockDataDir(dataDir);
    expect(() => lockDataDir(dataDir)).toThrow(`the embedded store ${dataDir} is open in this process`);
    lock.release();
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
    lockDataDir(dataDir).release();
  });

  it('takes over a lock left by a process that is gone', () => {
    const dataDir = join(dir, 'b');
    // Above Linux's largest pid_max (2^22), so no process has it.
    writeFileSync(`${dataDir}.lock`, String(2 ** 30));
    const lock = lockDataDir(dataDir);
    lock.release();
  });
});
