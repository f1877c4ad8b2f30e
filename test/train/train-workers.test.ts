// Data-parallel training on worker threads (trainer/train/workers/): two workers give the same update
// as the single-thread trainer (the reference: trainStep without workers on an identical model), for
// GRPO and for SFT with a frozen A, over several steps (so the workers must follow the coordinator's
// adapter); a worker that dies mid-step fails the step with `train-worker-died`, applies nothing, and
// the next step runs on fresh workers with the same result as if the failed one never happened.
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomWeights } from '../../model/init-model.ts';
import { loraVariables, setLoraATrainable } from '../../model/lora.ts';
import { PolicyModel } from '../../model/policy-model.ts';
import { AdamW } from '../../trainer/grpo/adamw.ts';
import { clipDefaults } from '../../trainer/grpo/loss-config.ts';
import type { TrainingSequence } from '../../trainer/engine/training-sequence.ts';
import type { Objective } from '../../trainer/grpo/objective-loss.ts';
import { type TrainStepOptions, trainStep } from '../../trainer/engine/tfjs/train-step.ts';
import { TrainWorkerError, TrainWorkerPool } from '../../trainer/engine/tfjs/workers/train-worker-pool.ts';
import { shareHostWeights } from '../../trainer/engine/tfjs/workers/worker-protocol.ts';
import { largestDifference } from '../support/max-difference.ts';
import { tinyConfig, useWasm } from './support/tiny-policy.ts';

const adapter = 'policy';
const config = tinyConfig();
const host = randomWeights(config, 1);
let pool: TrainWorkerPool;

beforeAll(async () => {
  await useWasm();
  pool = new TrainWorkerPool({
    size: 2,
    backend: 'wasm',
    model: { kind: 'host', config, tensors: shareHostWeights(host) },
  });
});

afterAll(async () => {
  await pool?.close();
});

function setup(freezeA = false): { model: PolicyModel; optimizer: AdamW } {
  const model = PolicyModel.fromHostWeights(config, host);
  model.addAdapter(
    adapter,
    { r: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj', 'up_proj'], initLoraWeights: false },
    { seed: 5 },
  );
  if (freezeA) setLoraATrainable(model.adapter(adapter), false);
  const optimizer = new AdamW(model.trainableVariables(adapter), {
    learningRate: 1e-3,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.01,
  });
  return { model, optimizer };
}

/** Sequences of varied lengths (so shards and micro-batches differ), the last half of each trained. */
function batch(seed: number, count = 7): TrainingSequence[] {
  return Array.from({ length: count }, (_, row) => {
    const length = 12 + ((row * 37 + seed * 11) % 41);
    const ids = Array.from({ length }, (_, t) => (seed * 131 + row * 17 + t * 29) % config.vocabSize);
    const targetMask = Array.from({ length: length - 1 }, (_, t) => (t >= (length - 1) / 2 ? 1 : 0));
    return {
      trajectoryId: `s${seed}-${row}`,
      groupId: null,
      ids,
      targetMask,
      // Sampling logprobs a little off the current ones for half the rows: ratios away from 1.
      oldLogprobs: targetMask.map((bit, t) => (bit && row % 2 === 0 ? -6 - (t % 3) * 0.1 : Number.NaN)),
      onPolicy: targetMask.map((bit) => (bit && row % 2 === 1 ? 1 : 0)),
      advantage: row % 3 === 0 ? 0.8 : -0.4,
      trainedTokens: targetMask.reduce((sum: number, bit) => sum + bit, 0),
    };
  });
}

const cispo: Objective = {
  kind: 'grpo',
  loss: { lossKind: 'cispo', clip: clipDefaults.cispo, aggregation: 'token-mean', beta: 0 },
};

// The rollout correction's weights are computed from each micro-batch's own logprobs, so they must
// come out the same on the workers; the batch's sampling logprobs (−6…) put some tokens (ratio up to ≈ 1.1) at the cap.
const ppoTis: Objective = {
  kind: 'grpo',
  loss: {
    lossKind: 'ppo-clip',
    clip: clipDefaults['ppo-clip'],
    aggregation: 'token-mean',
    beta: 0,
    correction: { kind: 'tis', cap: 1.05 },
  },
};

const stepOptions = (objective: Objective): TrainStepOptions => ({
  objective,
  // Two or three sequences per micro-batch: each worker sums several.
  microBatchTokens: 120,
  maxGradNorm: 1,
  learningRate: 1e-3,
  padTokenId: 0,
});

async function adapterValues(model: PolicyModel): Promise<Float32Array[]> {
  return Promise.all(
    loraVariables(model.adapter(adapter)).map(async (v) => Float32Array.from(await v.data())),
  );
}

function largestOver(a: Float32Array[], b: Float32Array[]): number {
  return Math.max(...a.map((values, i) => largestDifference(values, b[i] as Float32Array).difference));
}

// Float32 sums in another order differ by rounding; AdamW divides by √v, so a gradient component near
// zero can move by up to lr · (its relative rounding): 1e-5 on weights of size ~0.3 is ~1e-2 of lr.
const tolerance = 1e-5;

describe('data-parallel workers', () => {
  for (const [name, objective, freezeA] of [
    ['GRPO (CISPO), A and B trained', cispo, false],
    ['GRPO (PPO-clip) with truncated importance sampling', ppoTis, false],
    ['SFT, A frozen (LoRA-FA)', { kind: 'sft' } as Objective, true],
  ] as const) {
    it(`two workers give the single-thread update over three steps: ${name}`, async () => {
      const single = setup(freezeA);
      const parallel = setup(freezeA);
      try {
        for (let step = 1; step <= 3; step++) {
          const sequences = batch(step);
          const one = await trainStep(
            single.model,
            adapter,
            single.optimizer,
            sequences,
            stepOptions(objective),
          );
          const two = await trainStep(parallel.model, adapter, parallel.optimizer, sequences, {
            ...stepOptions(objective),
            workers: pool,
          });
          expect(two.workerSeconds?.length).toBe(2);
          expect(two.tokens).toBe(one.tokens);
          expect(Math.abs(two.gradNorm - one.gradNorm)).toBeLessThan(1e-5 * one.gradNorm);
          const loss = (r: typeof one) => r.microBatches.reduce((sum, b) => sum + b.loss, 0);
          expect(Math.abs(loss(two) - loss(one))).toBeLessThan(1e-5);
          if (objective === ppoTis) {
            const sum = (r: typeof one, key: 'isWeightSum' | 'isTruncated') =>
              r.microBatches.reduce((total, b) => total + (b[key] ?? Number.NaN), 0);
            expect(Math.abs(sum(two, 'isWeightSum') - sum(one, 'isWeightSum'))).toBeLessThan(1e-3);
            expect(sum(two, 'isTruncated')).toBe(sum(one, 'isTruncated'));
            expect(sum(one, 'isTruncated')).toBeGreaterThan(0);
            for (const b of [...one.microBatches, ...two.microBatches])
              expect(b.isWeightMax).toBeLessThanOrEqual(Math.fround(1.05));
          }
          const difference = largestOver(
            await adapterValues(parallel.model),
            await adapterValues(single.model),
          );
          console.log(`${name}, step ${step}: largest adapter difference ${difference}`);
          expect(difference).toBeLessThanOrEqual(tolerance);
        }
        // Frozen A stays where it started in both.
        if (freezeA) {
          const start = setup(true);
          const a = (values: Float32Array[]) => values.filter((_, i) => i % 2 === 0);
          expect(
            largestOver(a(await adapterValues(parallel.model)), a(await adapterValues(start.model))),
          ).toBe(0);
          start.model.dispose();
          start.optimizer.dispose();
        }
      } finally {
        for (const { model, optimizer } of [single, parallel]) {
          model.dispose();
          optimizer.dispose();
        }
      }
    });
  }

  it('follows a replaced adapter (another shape) on the same workers', async () => {
    const single = setup();
    const parallel = setup();
    try {
      await trainStep(parallel.model, adapter, parallel.optimizer, batch(4), {
        ...stepOptions(cispo),
        workers: pool,
      });
      const running = pool.running;
      // As TrainerSession.restore does when it starts again from another adapter.
      for (const side of [single, parallel]) {
        side.optimizer.dispose();
        side.model.removeAdapter(adapter);
        side.model.addAdapter(
          adapter,
          { r: 2, alpha: 4, targets: ['k_proj', 'o_proj', 'gate_proj'], initLoraWeights: false },
          { seed: 9 },
        );
        side.optimizer = new AdamW(side.model.trainableVariables(adapter), side.optimizer.options);
      }
      const sequences = batch(5);
      await trainStep(single.model, adapter, single.optimizer, sequences, stepOptions(cispo));
      await trainStep(parallel.model, adapter, parallel.optimizer, sequences, {
        ...stepOptions(cispo),
        workers: pool,
      });
      expect(pool.running).toBe(running);
      expect(
        largestOver(await adapterValues(parallel.model), await adapterValues(single.model)),
      ).toBeLessThanOrEqual(tolerance);
    } finally {
      for (const { model, optimizer } of [single, parallel]) {
        model.dispose();
        optimizer.dispose();
      }
    }
  });

  it('a worker that dies mid-step fails the step cleanly; the next step runs on fresh workers', async () => {
    const reference = setup();
    const parallel = setup();
    const tensorsBefore = tf.memory().numTensors;
    try {
      const before = await adapterValues(parallel.model);
      let killed = false;
      const failed = trainStep(parallel.model, adapter, parallel.optimizer, batch(1, 12), {
        ...stepOptions(cispo),
        workers: pool,
        onMicroBatch: () => {
          // First micro-batch report: every worker has more to do (12 sequences, ~2 per micro-batch).
          if (killed) return;
          killed = true;
          void pool.kill(0);
        },
      });
      await expect(failed).rejects.toBeInstanceOf(TrainWorkerError);
      await expect(failed).rejects.toMatchObject({ code: 'train-worker-died' });
      expect(killed).toBe(true);
      // Nothing applied: the adapter and the optimiser are as before, no tensor left behind.
      expect(largestOver(await adapterValues(parallel.model), before)).toBe(0);
      expect(parallel.optimizer.step).toBe(0);
      expect(tf.memory().numTensors).toBe(tensorsBefore);
      expect(pool.running).toBe(0);

      const sequences = batch(2);
      await trainStep(reference.model, adapter, reference.optimizer, sequences, stepOptions(cispo));
      const retried = await trainStep(parallel.model, adapter, parallel.optimizer, sequences, {
        ...stepOptions(cispo),
        workers: pool,
      });
      expect(retried.workerSeconds?.length).toBe(2);
      expect(pool.running).toBe(2);
      expect(
        largestOver(await adapterValues(parallel.model), await adapterValues(reference.model)),
      ).toBeLessThanOrEqual(tolerance);
    } finally {
      for (const { model, optimizer } of [reference, parallel]) {
        model.dispose();
        optimizer.dispose();
      }
    }
  });
});
