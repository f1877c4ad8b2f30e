// One trainer per output directory: `<outputDir>/trainer.lock` holds the owner's pid. Two trainers on
// one directory would both resume from the same checkpoint and write the same next step; overlapping
// cron runs hit exactly that. A lock whose process is gone (killed) is taken over. Node only.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface OutputLock {
  readonly path: string;
  release(): void;
}

/** Another live trainer holds the directory. */
export class TrainerBusyError extends Error {
  override readonly name = 'TrainerBusyError';
  readonly code = 'trainer-busy';
}

export function lockOutputDir(outputDir: string): OutputLock {
  mkdirSync(outputDir, { recursive: true });
  const path = join(outputDir, 'trainer.lock');
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
            // Already gone.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new TrainerBusyError(
          `another trainer (process ${owner}) is using ${outputDir}; wait for it, or give this one its own --output-dir`,
        );
      }
      if (owner === process.pid) {
        throw new TrainerBusyError(`${outputDir} is already locked by this process`);
      }
      unlinkSync(path); // stale: its process has exited
    }
  }
  throw new TrainerBusyError(`could not lock ${outputDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
