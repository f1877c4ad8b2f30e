// The trainer settings both training phases share (policy `demo`, the demo's model, output and
// serving directories, the local endpoint's replicas), with the mode-specific parts on top. Rewards: the
// environment's verifier, mixed with RULER when a judge is configured (EDGERL_JUDGE_BASE_URL), as the issue asks.
import { resolve } from 'node:path';
import { resolveTrainConfig, type TrainConfig, type TrainMode } from '../../trainer/train/train-config.ts';
import type { DemoConfig } from './demo-config.ts';
import type { DemoPaths } from './demo-paths.ts';

export const demoPolicyName = 'demo';
export const demoEnvironment = 'multi-hop';

export function demoTrainConfig(
  mode: TrainMode,
  config: DemoConfig,
  paths: DemoPaths,
  inferenceUrls: readonly string[],
  withJudge: boolean,
): TrainConfig {
  return resolveTrainConfig({
    mode,
    policyName: demoPolicyName,
    modelDir: paths.model,
    outputDir: paths.train,
    servingDir: paths.adapters,
    inference: { baseUrl: [...inferenceUrls], keepVersions: config.keepVersions },
    reward: withJudge ? 'ruler+verifier' : 'verifier',
    // A round's extra groups (--resample-groups) are claimed by the same cycle, never the next one's.
    groupsPerStep: config.groupsPerRound + config.resampleGroups,
    owner: `demo:${resolve(paths.train)}`.slice(0, 200),
    seed: config.seed,
    engine: { kind: config.engine, ...(config.torchPython ? { python: config.torchPython } : {}) },
    // 0: the backend's default (trainer/engine/tfjs/workers/worker-count.ts).
    workers: config.workers === 0 ? null : config.workers,
    replay: { sequences: config.replay, weight: config.replayWeight },
    // Keeps every round's checkpoint for a demo of 10–20 rounds (they are small: LoRA on a tiny model).
    keepCheckpoints: 100,
    // Weight decay off in both phases: it pulls the adapter back towards the random base, and the
    // runs are short (hypothesis list of the tuning issue; SFT recipes commonly use 0).
    loss: { learningRate: config.rlLearningRate, weightDecay: 0 },
    // One GRPO step per round, so a cosine decays over the rounds.
    lrSchedule: {
      kind: config.lrSchedule,
      warmupSteps: config.lrWarmupSteps,
      decaySteps: config.lrSchedule === 'cosine' ? config.rounds : null,
    },
    lora: {
      r: config.loraRank,
      alpha: 2 * config.loraRank,
      initA: config.loraInitA,
      freezeA: !config.loraTrainA,
    },
    sft: {
      demonstrationsFile: paths.demonstrations,
      env: demoEnvironment,
      epochs: config.sftEpochs,
      sequencesPerStep: config.sftBatch,
      learningRate: config.sftLearningRate,
    },
  });
}
