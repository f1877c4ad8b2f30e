// One trainer per output directory: `<outputDir>/trainer.lock` holds the owner's pid. Two trainers on
// one directory would both resume from the same checkpoint and write the same next step; overlapping
// cron runs hit exactly that. A lock whose process is gone (killed) is taken over. Node only.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { acquirePidLock, type PidLock } from '../../db/drivers/pid-lock-file.ts';

export type OutputLock = PidLock;

/** Another live trainer holds the directory. */
export class TrainerBusyError extends Error {
  override readonly name = 'TrainerBusyError';
  readonly code = 'trainer-busy';
}

export function lockOutputDir(outputDir: string): OutputLock {
  mkdirSync(outputDir, { recursive: true });
  return acquirePidLock(join(outputDir, 'trainer.lock'), (owner) =>
    owner === process.pid
      ? new TrainerBusyError(`${outputDir} is already locked by this process`)
      : new TrainerBusyError(
          `another trainer (process ${owner}) is using ${outputDir}; wait for it, or give this one its own --output-dir`,
        ),
  );
}
