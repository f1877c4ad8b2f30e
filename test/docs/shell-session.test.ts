// The docs test's shell: one bash per page, where state and jobs carry over from command to command,
// each command's status and output are its own, and closing it stops every job it started.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ShellSession } from './shell-session.ts';

let shell: ShellSession | undefined;
afterEach(async () => {
  await shell?.close();
  shell = undefined;
});

function open(): ShellSession {
  shell = new ShellSession({ cwd: process.cwd(), env: { ...process.env }, prelude: 'set -o pipefail' });
  return shell;
}

/** Alive and not a zombie (an orphan's exit may wait for a reaper that is slow here). Linux's /proc. */
function isRunning(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

describe('ShellSession', () => {
  it('keeps exports and jobs between commands, with each status and output its own', async () => {
    const session = open();
    expect(await session.run('export GREETING=hello', 5_000)).toMatchObject({ code: 0, stdout: '' });
    expect(await session.run('echo "$GREETING"; echo oops >&2', 5_000)).toEqual({
      code: 0,
      stdout: 'hello\n',
      stderr: 'oops\n',
      timedOut: false,
    });
    expect((await session.run('false | true', 5_000)).code).toBe(1);
    expect((await session.run('sleep 30 &', 5_000)).code).toBe(0);
    expect(await session.run('kill %1; wait %1', 5_000)).toMatchObject({ code: 143 });
  });

  it('reports a shell that exits while a job holds its output, and stops that job on close', async () => {
    const session = open();
    const started = await session.run('sleep 60 & echo $!', 5_000);
    const pid = Number(started.stdout.trim());
    expect(isRunning(pid)).toBe(true);
    const exited = await session.run('exit 3', 5_000);
    expect(exited).toMatchObject({ code: 3, timedOut: false });
    await session.close();
    expect(isRunning(pid)).toBe(false);
  });

  it('kills a command that runs past its time, and says so', async () => {
    const session = open();
    expect(await session.run('sleep 30', 300)).toMatchObject({ code: null, timedOut: true });
  });
});
