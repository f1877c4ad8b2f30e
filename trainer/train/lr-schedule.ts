// The factor the GRPO step's learning rate is multiplied by at optimiser step t = 1, 2, … (counted by
// the AdamW moments the step updates, so a restart from a checkpoint resumes the schedule, and a
// GRPO run after SFT starts its warm-up afresh with its fresh moments). Pure arithmetic.
import { assertNever } from '../../protocol/statuses.ts';
import type { LrScheduleSettings } from './lr-schedule-settings.ts';

/**
 * Linear warm-up t/K over the first K steps (from the first step on, unlike transformers'
 * get_linear_schedule_with_warmup, whose step 0 takes a rate of 0), then 1 (constant) or a half
 * cosine from 1 at step K+1 down over the steps to `decaySteps` (as get_cosine_schedule_with_warmup:
 * the planned run's last step still gets a little), and 0 after it.
 */
export function learningRateFactor(step: number, settings: LrScheduleSettings): number {
  if (!(Number.isInteger(step) && step >= 1))
    throw new RangeError(`step must be an integer >= 1, got ${step}`);
  const warmup = settings.warmupSteps;
  if (step <= warmup) return step / warmup;
  switch (settings.kind) {
    case 'constant':
      return 1;
    case 'cosine': {
      const end = settings.decaySteps ?? step;
      const progress = Math.min(1, (step - warmup - 1) / Math.max(1, end - warmup));
      return 0.5 * (1 + Math.cos(Math.PI * progress));
    }
    default:
      return assertNever(settings.kind, 'learning-rate schedule');
  }
}

/** `learningRate` scaled for optimiser step `step`. */
export function scheduledLearningRate(
  learningRate: number,
  step: number,
  settings: LrScheduleSettings,
): number {
  return learningRate * learningRateFactor(step, settings);
}
