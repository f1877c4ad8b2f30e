// The run-config hash is an allow-list: every setting that defines a run changes it, and settings that
// do not (the engine, memory knobs, where files go, leases) never do.
import { describe, expect, it } from 'vitest';
import { trainingConfigHash, runConfigSummary } from './run-config-summary.ts';
import { resolveTrainConfig, type TrainConfigInput } from './train-config.ts';

const minimal: TrainConfigInput = {
  policyName: 'agent',
  modelDir: 'models/tiny',
  inference: { baseUrl: 'http://127.0.0.1:8000/v1/' },
  owner: 'host:/out',
};

const hashOf = (input: Partial<TrainConfigInput>) =>
  trainingConfigHash(resolveTrainConfig({ ...minimal, ...input }));

describe('the run-config hash', () => {
  const base = hashOf({});

  it.each<[string, Partial<TrainConfigInput>]>([
    ['the mode', { mode: 'sft' }],
    ['the reward', { reward: 'verifier' }],
    ['a reward weight', { rewardWeights: { judge: 2 } }],
    ['the loss', { loss: { lossKind: 'ppo-clip' } }],
    ['a clip bound', { loss: { clip: { low: 0.1 } } }],
    ['the aggregation', { loss: { aggregation: 'sequence-mean' } }],
    ['the reward scaling', { loss: { scaleRewards: 'group' } }],
    ['beta', { loss: { beta: 0.01 } }],
    ['the learning rate', { loss: { learningRate: 1e-4 } }],
    ['AdamW', { loss: { weightDecay: 0 } }],
    ['the gradient clip', { loss: { maxGradNorm: 0.5 } }],
    ['the staleness bound', { offPolicy: { maxOffPolicySteps: 2 } }],
    ['the rollout correction', { offPolicy: { correction: 'tis' } }],
    ['the LoRA rank', { lora: { r: 16 } }],
    ['the LoRA targets', { lora: { targets: ['q_proj'] } }],
    ['LoRA-FA', { lora: { freezeA: true } }],
    ['a warm-up', { lrSchedule: { warmupSteps: 3 } }],
    ['groups per step', { groupsPerStep: 4 }],
    ['steps per cycle', { stepsPerCycle: 2 }],
    ['the seed', { seed: 7 }],
    ['replay', { replay: { sequences: 4 } }],
  ])('changes with %s', (_name, change) => {
    expect(hashOf(change)).not.toBe(base);
  });

  it.each<[string, Partial<TrainConfigInput>]>([
    [
      'the engine',
      { engine: { kind: 'torch', processes: 2, dtype: 'bfloat16', gradientCheckpointing: false } },
    ],
    ['the micro-batch size (memory, not math)', { loss: { microBatchTokens: 64 } }],
    ['gradient workers', { workers: 2 }],
    ['the output directory', { outputDir: '/elsewhere' }],
    ['the lease', { leaseSeconds: 30 }],
    ['publication', { publish: { makeDefault: false, abTestWeight: 0.5 } }],
    ['checkpoint retention', { keepCheckpoints: 9 }],
    ['SFT settings in an RL run', { sft: { epochs: 9 } }],
    ['a continuous schedule', { continuous: true, offPolicy: { correction: 'none' } }],
  ])('stays with %s', (_name, change) => {
    expect(hashOf(change)).toBe(base);
  });

  it('records SFT settings in an SFT run, and infinite clipping as null', () => {
    const summary = runConfigSummary(
      resolveTrainConfig({
        ...minimal,
        mode: 'sft',
        sft: { epochs: 2 },
        loss: { maxGradNorm: Number.POSITIVE_INFINITY },
      }),
    );
    expect(summary).toMatchObject({ sft: { epochs: 2 }, loss: { maxGradNorm: null } });
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);
  });
});
