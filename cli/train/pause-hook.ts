// The crash-test hook: EDGERL_TRAIN_PAUSE_AT names a point of the cycle where the trainer says so and
// waits forever, for a test to kill it there (test/train/kill-resume.test.ts); with
// EDGERL_TRAIN_PAUSE_UNTIL naming a file, it waits only until that file exists, for a test to cut
// something (the store) mid-cycle and let the cycle go on (test/faults/store-outage-trainer.test.ts).
import { existsSync } from 'node:fs';
import { type HookPoint, hookPoints } from '../../trainer/train/trainer-session.ts';
import { UsageError } from '../command.ts';

export function pausePoint(value: string | undefined): HookPoint | undefined {
  if (!value) return undefined;
  if (!(hookPoints as readonly string[]).includes(value)) {
    throw new UsageError(`EDGERL_TRAIN_PAUSE_AT must be one of ${hookPoints.join(', ')}, got "${value}"`);
  }
  return value as HookPoint;
}

export function pauseHook(point: HookPoint, stderr: NodeJS.WritableStream, untilFile?: string) {
  return async (reached: HookPoint) => {
    if (reached !== point) return;
    if (untilFile === undefined) {
      stderr.write(`edgerl train: paused at ${point}\n`);
      return new Promise<never>(() => {
        setInterval(() => {}, 60_000);
      });
    }
    if (existsSync(untilFile)) return;
    stderr.write(`edgerl train: paused at ${point} until ${untilFile} exists\n`);
    while (!existsSync(untilFile)) await new Promise((resolve) => setTimeout(resolve, 50));
    stderr.write(`edgerl train: resumed at ${point}\n`);
  };
}
