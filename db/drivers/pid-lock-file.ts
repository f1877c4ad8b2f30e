// A lock file holding its owner's process id, created with O_EXCL so only one process can hold it.
// A lock whose process is gone (a crash, a kill -9) is taken over. Used for the embedded store's
// directory and for a trainer's output directory. Node only.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

export interface PidLock {
  readonly path: string;
  /** Removes the lock file; calling it again does nothing. */
  release(): void;
}

/** Takes the lock at `path`, or throws `busy(ownerPid)` while a live process (this one included) holds it. */
export function acquirePidLock(path: string, busy: (ownerPid: number) => Error): PidLock {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        path,
        release: () => {
          if (released) return;
          released = true;
          try {
            unlinkSync(path);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) throw busy(owner);
      unlinkSync(path); // stale: its process has exited
    }
  }
  throw new Error(`could not take the lock ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
