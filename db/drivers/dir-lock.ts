// A lock file beside the embedded store's directory (`<dataDir>.lock`, holding the owner's pid), so a
// second process cannot open the same PGlite directory: PGlite, unlike a Postgres server, does not
// refuse a second opener, and two writers would corrupt the files. Node only.
import { acquirePidLock, type PidLock } from './pid-lock-file.ts';

export type DirLock = PidLock;

export function lockDataDir(dataDir: string): DirLock {
  const path = `${dataDir}.lock`;
  return acquirePidLock(path, (owner) => {
    const who = owner === process.pid ? 'this process' : `process ${owner}`;
    return new Error(
      `the embedded store ${dataDir} is open in ${who}; close it first, or share a Postgres server through DATABASE_URL (if no edgerl process is running, delete ${path})`,
    );
  });
}
