// A lock file beside the embedded store's directory (`<dataDir>.lock`, holding the owner's pid), so a
// second process cannot open the same PGlite directory: PGlite, unlike a Postgres server, does not
// refuse a second opener, and two writers would corrupt the files. A lock whose process is gone (a
// crash) is taken over. Node only.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

export interface DirLock {
  release(): void;
}

export function lockDataDir(dataDir: string): DirLock {
  const path = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return {
        release: () => {
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
      if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
        const who = owner === process.pid ? 'this process' : `process ${owner}`;
        throw new Error(
          `the embedded store ${dataDir} is open in ${who}; close it first, or share a Postgres server through DATABASE_URL (if no edgerl process is running, delete ${path})`,
        );
      }
      unlinkSync(path); // stale: its process has exited
    }
  }
  throw new Error(`could not lock ${dataDir}`);
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
