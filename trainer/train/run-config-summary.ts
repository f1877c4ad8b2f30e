// The settings that shape what a training run does, as recorded with the run (training_runs.config), and
// their hash: a trainer continues a run only while the hash is the same (trainer-session.ts).
import { createHash } from 'node:crypto';
import type { TrainConfig } from './train-config.ts';

/** The settings that shape what training does; recorded with the run. */
export function runConfigSummary(config: TrainConfig): Record<string, unknown> {
  return {
    mode: config.mode,
    reward: config.reward,
    rewardWeights: config.rewardWeights,
    loss: {
      ...config.loss,
      maxGradNorm: Number.isFinite(config.loss.maxGradNorm) ? config.loss.maxGradNorm : null,
    },
    offPolicy: config.offPolicy,
    lora: config.lora,
    // Only a schedule other than the default enters the hash, so runs from before it existed continue.
    ...(config.mode === 'rl' && !isDefaultSchedule(config.lrSchedule)
      ? { lrSchedule: config.lrSchedule }
      : {}),
    groupsPerStep: config.groupsPerStep,
    stepsPerCycle: config.stepsPerCycle,
    seed: config.seed,
    // Likewise replay, only when on.
    ...(config.mode === 'rl' && config.replay.sequences > 0 ? { replay: config.replay } : {}),
    ...(config.mode === 'sft' ? { sft: config.sft } : {}),
  };
}

function isDefaultSchedule(schedule: TrainConfig['lrSchedule']): boolean {
  return schedule.kind === 'constant' && schedule.warmupSteps === 0;
}

export function trainingConfigHash(config: TrainConfig): string {
  return createHash('sha256')
    .update(JSON.stringify(runConfigSummary(config)))
    .digest('hex')
    .slice(0, 16);
}
