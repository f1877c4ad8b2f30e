// The crash-test hook: EDGERL_TRAIN_PAUSE_AT names a point of the cycle where the trainer says so and
// waits forever, for a test to kill it there (test/train/kill-resume.test.ts).
import { type HookPoint, hookPoints } from '../../trainer/train/trainer-session.ts';
import { UsageError } from '../command.ts';

export function pausePoint(value: string | undefined): HookPoint | undefined {
  if (!value) return undefined;
  if (!(hookPoints as readonly string[]).includes(value)) {
    throw new UsageError(`EDGERL_TRAIN_PAUSE_AT must be one of ${hookPoints.join(', ')}, got "${value}"`);
  }
  return value as HookPoint;
}

export function pauseHook(point: HookPoint, stderr: NodeJS.WritableStream) {
  return async (reached: HookPoint) => {
    if (reached !== point) return;
    stderr.write(`edgerl train: paused at ${point}\n`);
    await new Promise<never>(() => {
      setInterval(() => {}, 60_000);
    });
  };
}
