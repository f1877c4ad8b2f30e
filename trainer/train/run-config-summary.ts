// The settings that define a training run, as recorded with the run (training_runs.config), and their
// hash: a trainer continues a run only while the hash is the same (trainer-session.ts). An explicit
// allow-list: a setting enters only when it is named here, so a new flag never starts new runs by
// accident. Left out on purpose: the engine and its memory knobs (--engine, --micro-batch-tokens,
// --workers…), where things go, leases, publication, and the job's schedule: none changes what is
// trained.
import { createHash } from 'node:crypto';
import type { TrainConfig } from './train-config.ts';

/** The settings that define what training does; recorded with the run. */
export function runConfigSummary(config: TrainConfig): Record<string, unknown> {
  const { loss, lora, offPolicy, replay, sft } = config;
  return {
    mode: config.mode,
    reward: config.reward,
    rewardWeights: { judge: config.rewardWeights.judge, verifier: config.rewardWeights.verifier },
    loss: {
      clip: { low: loss.clip.low, high: loss.clip.high },
      lossKind: loss.lossKind,
      aggregation: loss.aggregation,
      scaleRewards: loss.scaleRewards,
      advantageEps: loss.advantageEps,
      beta: loss.beta,
      learningRate: loss.learningRate,
      weightDecay: loss.weightDecay,
      adamBeta1: loss.adamBeta1,
      adamBeta2: loss.adamBeta2,
      adamEps: loss.adamEps,
      maxGradNorm: Number.isFinite(loss.maxGradNorm) ? loss.maxGradNorm : null,
    },
    offPolicy: {
      maxOffPolicySteps: offPolicy.maxOffPolicySteps,
      correction: offPolicy.correction,
      isCap: offPolicy.isCap,
    },
    lora: {
      r: lora.r,
      alpha: lora.alpha,
      dropout: lora.dropout,
      targets: lora.targets,
      useRslora: lora.useRslora,
      initA: lora.initA,
      freezeA: lora.freezeA,
    },
    // Only a schedule other than the default enters the hash, so runs from before it existed continue.
    ...(config.mode === 'rl' && !isDefaultSchedule(config.lrSchedule)
      ? {
          lrSchedule: {
            kind: config.lrSchedule.kind,
            warmupSteps: config.lrSchedule.warmupSteps,
            decaySteps: config.lrSchedule.decaySteps,
          },
        }
      : {}),
    groupsPerStep: config.groupsPerStep,
    stepsPerCycle: config.stepsPerCycle,
    seed: config.seed,
    // Likewise replay, only when on.
    ...(config.mode === 'rl' && replay.sequences > 0
      ? { replay: { sequences: replay.sequences, weight: replay.weight, minReward: replay.minReward } }
      : {}),
    ...(config.mode === 'sft'
      ? {
          sft: {
            minReward: sft.minReward,
            rewardField: sft.rewardField,
            ...(sft.env === undefined ? {} : { env: sft.env }),
            limit: sft.limit,
            ...(sft.demonstrationsFile === undefined ? {} : { demonstrationsFile: sft.demonstrationsFile }),
            epochs: sft.epochs,
            sequencesPerStep: sft.sequencesPerStep,
            learningRate: sft.learningRate,
          },
        }
      : {}),
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
