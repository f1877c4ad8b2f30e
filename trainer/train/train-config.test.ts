// resolveTrainConfig: documented defaults, and every cross-field problem reported at once, each naming
// the flag and how to fix it.
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projections } from '../../model/hf-config.ts';
import {
  type RewardMode,
  resolveTrainConfig,
  TrainConfigError,
  type TrainConfigInput,
} from './train-config.ts';

const minimal: TrainConfigInput = {
  policyName: 'agent',
  modelDir: 'models/tiny',
  inference: { baseUrl: 'http://127.0.0.1:8000/v1/' },
  owner: 'host:/out',
};

function issues(input: Partial<TrainConfigInput>): readonly string[] {
  try {
    resolveTrainConfig({ ...minimal, ...input });
  } catch (error) {
    if (error instanceof TrainConfigError) return error.issues;
    throw error;
  }
  return [];
}

describe('resolveTrainConfig', () => {
  it('fills the documented defaults', () => {
    const config = resolveTrainConfig(minimal);
    expect(config).toMatchObject({
      mode: 'rl',
      reward: 'ruler',
      baseModelName: 'models/tiny',
      outputDir: join('.edgerl', 'train', 'agent'),
      servingDir: join('.edgerl', 'train', 'agent', 'adapters'),
      inference: { baseUrl: 'http://127.0.0.1:8000/v1', timeoutMs: 60_000 },
      publish: { makeDefault: true, abTestWeight: null },
      groupsPerStep: 8,
      stepsPerCycle: 1,
      leaseSeconds: 600,
      keepCheckpoints: 3,
      maxSequenceTokens: null,
      lora: {
        r: 8,
        alpha: 8,
        dropout: 0,
        targets: projections,
        useRslora: false,
        initA: 'kaiming-uniform',
        freezeA: false,
      },
      sft: {
        minReward: 1,
        rewardField: 'final',
        epochs: 3,
        sequencesPerStep: 8,
        learningRate: 2e-4,
        limit: 1000,
      },
    });
    expect(config.loss).toMatchObject({
      lossKind: 'cispo',
      clip: { low: 1, high: 4 },
      aggregation: 'token-mean',
      scaleRewards: 'none',
      beta: 0,
      learningRate: 5e-6,
      maxGradNorm: 1,
      microBatchTokens: 8192,
    });
  });

  it('takes the clip band of the chosen loss', () => {
    expect(resolveTrainConfig({ ...minimal, loss: { lossKind: 'ppo-clip' } }).loss.clip).toEqual({
      low: 0.2,
      high: 0.28,
    });
  });

  it('reports every problem at once, naming the flag', () => {
    const found = issues({
      policyName: 'my agent',
      inference: { baseUrl: '' },
      // Untyped input, as a config file or a flag gives it.
      reward: 'judge' as RewardMode,
      publish: { abTestWeight: 0.5 },
      lora: { r: 0 },
      loss: { learningRate: -1 },
      groupsPerStep: 0,
    });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^--lr must be > 0, got -1/),
        expect.stringMatching(/^--reward must be one of ruler, verifier, ruler\+verifier, got "judge"/),
        expect.stringMatching(/^--policy must be letters, digits/),
        expect.stringMatching(/^--inference-url \(or EDGERL_INFERENCE_URL\) is required/),
        expect.stringMatching(/^--ab-test lets the experiment decide which version serves: add --no-default/),
        expect.stringMatching(/^--lora-rank must be an integer between 1 and 4096, got 0/),
        expect.stringMatching(/^--groups-per-step must be an integer between 1 and 1000, got 0/),
      ]),
    );
    expect(found).toHaveLength(7);
  });

  it('names a LoRA init it does not know', () => {
    expect(issues({ lora: { initA: 'xavier' as 'orthogonal' } })).toEqual([
      '--lora-init-a must be one of kaiming-uniform, orthogonal, got "xavier"',
    ]);
  });

  it('names the allowed values of every union field it refuses', () => {
    // Untyped input, as a config file or a flag gives it.
    const bad = (value: string) => value as never;
    expect(
      issues({
        mode: bad('warmup'),
        loss: { lossKind: bad('ppo'), aggregation: bad('sum'), scaleRewards: bad('std') },
        sft: { rewardField: bad('judge') },
      }),
    ).toEqual([
      'mode must be one of rl, sft, got "warmup"',
      '--loss must be one of ppo-clip, cispo, got "ppo"',
      '--aggregation must be one of token-mean, sequence-mean, got "sum"',
      '--scale-rewards must be one of group, none, got "std"',
      '--sft-reward must be one of final, verifier, got "judge"',
    ]);
  });

  it('derives the owner from the host and the absolute output directory', () => {
    const { owner: _owner, ...withoutOwner } = minimal;
    const config = resolveTrainConfig({ ...withoutOwner, outputDir: 'out/a' });
    expect(config.owner).toBe(`${hostname()}:${resolve('out/a')}`);
  });

  it('rejects settings it does not know', () => {
    expect(issues({ lora: { rank: 4 } as never })).toEqual(['unknown setting "rank" in lora']);
  });

  it('wants the OpenAI base URL, with /v1', () => {
    expect(issues({ inference: { baseUrl: 'http://127.0.0.1:8000' } })).toEqual([
      '--inference-url must end in /v1 (the OpenAI base URL), got "http://127.0.0.1:8000"; try "http://127.0.0.1:8000/v1"',
    ]);
    expect(issues({ inference: { baseUrl: 'ftp://x/v1' } })[0]).toMatch(/must be an http\(s\) URL/);
  });

  it('takes a fleet as repeated URLs or one comma-separated list; at least one replica must acknowledge', () => {
    const fleet = resolveTrainConfig({
      ...minimal,
      inference: { baseUrl: ['http://a:8000/v1/', 'http://b:8000/v1,http://c:8000/v1', 'http://a:8000/v1'] },
    });
    expect(fleet.inference).toMatchObject({
      baseUrl: 'http://a:8000/v1',
      replicas: ['http://a:8000/v1', 'http://b:8000/v1', 'http://c:8000/v1'],
      minReplicas: 1,
    });
    expect(resolveTrainConfig(minimal).inference.replicas).toEqual(['http://127.0.0.1:8000/v1']);
    expect(issues({ inference: { baseUrl: 'http://a:8000/v1,http://b:8000/v1', minReplicas: 3 } })).toEqual([
      '--min-replicas must be at most the number of --inference-url replicas (2), got 3',
    ]);
    expect(issues({ inference: { baseUrl: ['http://a:8000/v1', 'http://b:8000'] } })[0]).toMatch(
      /^--inference-url must end in \/v1/,
    );
  });

  it('checks the A/B share and the ruler+verifier weights', () => {
    expect(issues({ publish: { makeDefault: false, abTestWeight: 1 } })[0]).toMatch(
      /strictly between 0 and 1, got 1/,
    );
    expect(issues({ publish: { makeDefault: false, abTestWeight: 0.1 } })).toEqual([]);
    expect(issues({ reward: 'ruler+verifier', rewardWeights: { judge: 0, verifier: 0 } })[0]).toMatch(
      /at least one of the judge and verifier weights/,
    );
  });

  it('refuses FSDP sharding without several engine processes', () => {
    expect(issues({ engine: { kind: 'torch', sharding: 'fsdp' } })).toEqual([
      '--engine-sharding fsdp shards the model over several engine processes: add --engine-processes N (N >= 2, one per GPU), or drop --engine-sharding',
    ]);
    expect(issues({ engine: { kind: 'torch', processes: 2, sharding: 'fsdp' } })).toEqual([]);
    expect(resolveTrainConfig(minimal).engine.sharding).toBe('none');
  });

  it('refuses a sequence limit larger than a micro-batch', () => {
    expect(issues({ maxSequenceTokens: 10_000 })[0]).toMatch(/exceeds --micro-batch-tokens \(8192\)/);
  });

  it('bounds staleness at 4 versions; --continuous turns the rollout correction on unless told', () => {
    expect(resolveTrainConfig(minimal)).toMatchObject({
      continuous: false,
      offPolicy: { maxOffPolicySteps: 4, correction: 'none', isCap: 2 },
    });
    expect(resolveTrainConfig({ ...minimal, continuous: true }).offPolicy.correction).toBe('tis');
    expect(
      resolveTrainConfig({ ...minimal, continuous: true, offPolicy: { correction: 'none' } }).offPolicy
        .correction,
    ).toBe('none');
    expect(issues({ offPolicy: { isCap: 0.5, maxOffPolicySteps: -1 } })).toEqual([
      '--max-off-policy-steps must be an integer between 0 and 1000000, got -1',
      '--is-cap must be at least 1 and below e^20, got 0.5',
    ]);
    expect(issues({ continuous: true, mode: 'sft' })).toEqual([
      '--continuous trains GRPO while rollouts run; --sft is a one-off warm-up: drop one of them',
    ]);
  });
});
