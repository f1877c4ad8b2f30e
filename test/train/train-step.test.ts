// trainStep on the tiny model: the loss it reports against values computed by hand from the model's
// own logprobs, the direction of an update (positive advantage raises the trained tokens' logprob,
// negative lowers it), clip counting, micro-batch invariance, SFT, and no tensor left behind.
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AdamW } from '../../trainer/grpo/adamw.ts';
import { clipDefaults } from '../../trainer/grpo/loss-config.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { TrainingSequence } from '../../trainer/engine/training-sequence.ts';
import { stepNormaliser } from '../../trainer/grpo/aggregate.ts';
import type { Objective } from '../../trainer/grpo/objective-loss.ts';
import { sequenceGradients, trainStep } from '../../trainer/engine/tfjs/train-step.ts';
import { tinyModel, useWasm } from './support/tiny-policy.ts';

beforeAll(async () => {
  await useWasm();
});

const adapter = 'policy';
const pad = 0;

function setup(seed = 3): { model: PolicyModel; optimizer: AdamW } {
  const model = tinyModel(1);
  // initLoraWeights false: B is random too, so every adapter tensor gets a gradient from step 1.
  model.addAdapter(
    adapter,
    { r: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj'], initLoraWeights: false },
    { seed },
  );
  const optimizer = new AdamW(model.trainableVariables(adapter), {
    learningRate: 1e-3,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0,
  });
  return { model, optimizer };
}

/** A sequence of `ids` trained on its last `trained` tokens, with `old` as their sampling logprobs. */
function sequence(
  id: string,
  ids: number[],
  trained: number,
  advantage: number,
  old: (target: number) => number = () => Number.NaN,
): TrainingSequence {
  const length = ids.length - 1;
  const targetMask = Array.from({ length }, (_, t) => (t >= length - trained ? 1 : 0));
  return {
    trajectoryId: id,
    groupId: null,
    ids,
    targetMask,
    oldLogprobs: targetMask.map((bit, t) => (bit ? old(t) : Number.NaN)),
    onPolicy: targetMask.map((bit, t) => (bit && !Number.isFinite(old(t)) ? 1 : 0)),
    advantage,
    trainedTokens: trained,
  };
}

/** Host logprobs of each sequence's targets under the adapter, and their sum over the trained ones. */
async function trainedLogprobs(model: PolicyModel, sequences: readonly TrainingSequence[]) {
  const all = await model.logprobs(
    sequences.map((s) => s.ids),
    { adapter },
  );
  return sequences.map((s, row) => {
    const values = (all[row] as number[]).filter((_, t) => s.targetMask[t] === 1);
    return { values, sum: values.reduce((a, b) => a + b, 0) };
  });
}

const grpo = (
  lossKind: 'cispo' | 'ppo-clip',
  aggregation: 'token-mean' | 'sequence-mean' = 'token-mean',
): Objective => ({
  kind: 'grpo',
  loss: { lossKind, clip: clipDefaults[lossKind], aggregation, beta: 0 },
});

const stepOptions = (objective: Objective, microBatchTokens = 4096) => ({
  objective,
  microBatchTokens,
  maxGradNorm: Number.POSITIVE_INFINITY,
  learningRate: 1e-3,
  padTokenId: pad,
});

const idsA = [10, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100];
const idsB = [10, 72, 105, 33, 32, 87, 104, 111];

describe('trainStep: the reported loss equals the hand computation', () => {
  it('CISPO token-mean at ratio 1 is −Σ A·ℓ / N', async () => {
    const { model, optimizer } = setup();
    const seqs = [sequence('a', idsA, 5, 0.5), sequence('b', idsB, 3, -0.5)];
    const [a, b] = await trainedLogprobs(model, seqs);
    const result = await trainStep(model, adapter, optimizer, seqs, stepOptions(grpo('cispo')));
    // N = 5 + 3 = 8 trained tokens; weight sg(clip(1)) = 1, so
    // loss = −(0.5·Σℓ_a + (−0.5)·Σℓ_b) / 8.
    const expected = -(0.5 * (a?.sum as number) - 0.5 * (b?.sum as number)) / 8;
    const loss = result.microBatches.reduce((sum, batch) => sum + batch.loss, 0);
    expect(Math.abs(loss - expected)).toBeLessThan(1e-5);
    expect(result.microBatches.reduce((sum, batch) => sum + batch.tokens, 0)).toBe(8);
    // ratio = exp(ℓ − ℓ) = 1 on all 8 tokens: the mean ratio is 1 and nothing is clipped.
    expect(result.microBatches.reduce((sum, batch) => sum + batch.ratioSum, 0)).toBeCloseTo(8, 5);
    expect(result.microBatches.reduce((sum, batch) => sum + batch.clippedHigh + batch.clippedLow, 0)).toBe(0);
    model.dispose();
    optimizer.dispose();
  });

  it('PPO-clip with a recorded logprob 1 nat below the current one counts one high clip', async () => {
    const { model, optimizer } = setup();
    const [current] = await trainedLogprobs(model, [sequence('a', idsA, 4, 1)]);
    const values = current?.values as number[];
    // Target positions of the 4 trained tokens: 8, 9, 10, 11 (T − 1 = 12). The first was sampled with
    // logprob ℓ − 1, so ρ = e¹ ≈ 2.718 > 1 + 0.28 with A = +1: clipped (no gradient); the others ρ = 1.
    const seq = sequence('a', idsA, 4, 1, (t) => (values[t - 8] as number) - (t === 8 ? 1 : 0));
    const result = await trainStep(model, adapter, optimizer, [seq], stepOptions(grpo('ppo-clip')));
    const sums = result.microBatches[0];
    expect(sums?.clippedHigh).toBe(1);
    expect(sums?.clippedLow).toBe(0);
    // loss = −(min(e·1, 1.28·1) + 1 + 1 + 1) / 4 = −(1.28 + 3) / 4 = −1.07
    expect(sums?.loss).toBeCloseTo(-1.07, 5);
    // mean ratio = (e + 3) / 4
    expect((sums?.ratioSum as number) / 4).toBeCloseTo((Math.E + 3) / 4, 4);
    model.dispose();
    optimizer.dispose();
  });

  it('sequence-mean weighs each sequence once: −(A_a·mean ℓ_a + A_b·mean ℓ_b) / 2', async () => {
    const { model, optimizer } = setup();
    const seqs = [sequence('a', idsA, 5, 1), sequence('b', idsB, 2, -1)];
    const [a, b] = await trainedLogprobs(model, seqs);
    const result = await trainStep(
      model,
      adapter,
      optimizer,
      seqs,
      stepOptions(grpo('cispo', 'sequence-mean')),
    );
    const expected = -((a?.sum as number) / 5 - (b?.sum as number) / 2) / 2;
    expect(Math.abs((result.microBatches[0]?.loss as number) - expected)).toBeLessThan(1e-5);
    model.dispose();
    optimizer.dispose();
  });

  it('SFT is the mean negative log-likelihood of the trained tokens', async () => {
    const { model, optimizer } = setup();
    const seqs = [sequence('a', idsA, 6, 1), sequence('b', idsB, 4, 1)];
    const [a, b] = await trainedLogprobs(model, seqs);
    const result = await trainStep(model, adapter, optimizer, seqs, stepOptions({ kind: 'sft' }));
    // loss = −(Σℓ_a + Σℓ_b) / (6 + 4)
    const expected = -((a?.sum as number) + (b?.sum as number)) / 10;
    const loss = result.microBatches.reduce((sum, batch) => sum + batch.loss, 0);
    expect(Math.abs(loss - expected)).toBeLessThan(1e-5);
    const [afterA, afterB] = await trainedLogprobs(model, seqs);
    expect(afterA?.sum).toBeGreaterThan(a?.sum as number);
    expect(afterB?.sum).toBeGreaterThan(b?.sum as number);
    model.dispose();
    optimizer.dispose();
  });

  it('SFT loss weights count a token that many times over the same token normaliser', async () => {
    const { model, optimizer } = setup();
    const plain = [sequence('a', idsA, 6, 1), sequence('b', idsB, 4, 1)];
    const [a, b] = await trainedLogprobs(model, plain);
    // Weight 3 on a's last trained token, 0.5 on b's first; every other token 1.
    const weightsA = (plain[0] as TrainingSequence).targetMask.map((_, t, all) =>
      t === all.length - 1 ? 3 : 1,
    );
    const firstB = (plain[1] as TrainingSequence).targetMask.indexOf(1);
    const weightsB = (plain[1] as TrainingSequence).targetMask.map((_, t) => (t === firstB ? 0.5 : 1));
    const weighted = [
      { ...(plain[0] as TrainingSequence), lossWeights: weightsA },
      { ...(plain[1] as TrainingSequence), lossWeights: weightsB },
    ];
    const result = await trainStep(model, adapter, optimizer, weighted, stepOptions({ kind: 'sft' }));
    const lastA = a?.values.at(-1) as number;
    const firstValueB = b?.values[0] as number;
    // loss = −(Σℓ_a + 2ℓ_a,last + Σℓ_b − 0.5ℓ_b,first) / (6 + 4): weights scale tokens, not the count.
    const expected = -((a?.sum as number) + 2 * lastA + (b?.sum as number) - 0.5 * firstValueB) / 10;
    const loss = result.microBatches.reduce((sum, batch) => sum + batch.loss, 0);
    expect(Math.abs(loss - expected)).toBeLessThan(1e-5);
    expect(result.microBatches.reduce((sum, batch) => sum + batch.tokens, 0)).toBe(10);
    model.dispose();
    optimizer.dispose();
  });
});

describe('trainStep: direction of the update', () => {
  for (const lossKind of ['cispo', 'ppo-clip'] as const) {
    it(`${lossKind}: a positive advantage raises the trained tokens' logprob, a negative one lowers it`, async () => {
      for (const [advantage, direction] of [
        [1, 1],
        [-1, -1],
      ] as const) {
        const { model, optimizer } = setup();
        const seqs = [sequence('a', idsA, 6, advantage)];
        const [before] = await trainedLogprobs(model, seqs);
        await trainStep(model, adapter, optimizer, seqs, stepOptions(grpo(lossKind)));
        const [after] = await trainedLogprobs(model, seqs);
        expect(Math.sign((after?.sum as number) - (before?.sum as number))).toBe(direction);
        model.dispose();
        optimizer.dispose();
      }
    });
  }

  it('in one batch, the positive sequence rises and the negative one falls', async () => {
    const { model, optimizer } = setup();
    const seqs = [sequence('a', idsA, 6, 0.5), sequence('b', idsB, 4, -0.5)];
    const [a, b] = await trainedLogprobs(model, seqs);
    for (let step = 0; step < 3; step++) {
      await trainStep(model, adapter, optimizer, seqs, stepOptions(grpo('cispo')));
    }
    const [afterA, afterB] = await trainedLogprobs(model, seqs);
    expect(afterA?.sum).toBeGreaterThan(a?.sum as number);
    expect(afterB?.sum).toBeLessThan(b?.sum as number);
    model.dispose();
    optimizer.dispose();
  });
});

describe('trainStep: bookkeeping', () => {
  it('refuses a trained token with neither a sampling logprob nor the on-policy flag, before any tensor', async () => {
    const { model, optimizer } = setup();
    const unflagged = {
      ...sequence('a', idsA, 5, 0.5),
      onPolicy: new Array<number>(idsA.length - 1).fill(0),
    };
    const before = tf.memory().numTensors;
    await expect(
      trainStep(model, adapter, optimizer, [unflagged], stepOptions(grpo('cispo'))),
    ).rejects.toThrow(/trajectory a, target 7 is trained with neither/); // 12 targets, the last 5 trained: the first is target 7
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
    optimizer.dispose();
  });

  it('gives the same loss and gradient norm however the step is split into micro-batches', async () => {
    const seqs = [
      sequence('a', idsA, 5, 0.75),
      sequence('b', idsB, 3, -0.25),
      sequence('c', idsA.slice(0, 9), 2, -0.5),
    ];
    const whole = setup();
    const split = setup();
    const one = await trainStep(whole.model, adapter, whole.optimizer, seqs, stepOptions(grpo('cispo')));
    // 13 padded tokens per micro-batch forces one sequence per micro-batch.
    const many = await trainStep(split.model, adapter, split.optimizer, seqs, stepOptions(grpo('cispo'), 13));
    expect(one.microBatches).toHaveLength(1);
    expect(many.microBatches).toHaveLength(3);
    const loss = (r: typeof one) => r.microBatches.reduce((sum, batch) => sum + batch.loss, 0);
    expect(Math.abs(loss(one) - loss(many))).toBeLessThan(1e-6);
    expect(Math.abs(one.gradNorm - many.gradNorm) / one.gradNorm).toBeLessThan(1e-4);
    expect(one.tokens).toBe(13 + 8 + 9);
    for (const run of [whole, split]) {
      run.model.dispose();
      run.optimizer.dispose();
    }
  });

  it('leaves no tensor behind, with the KL reference pass on', async () => {
    const { model, optimizer } = setup();
    const seqs = [sequence('a', idsA, 5, 1), sequence('b', idsB, 3, -1)];
    const objective: Objective = {
      kind: 'grpo',
      loss: { lossKind: 'cispo', clip: clipDefaults.cispo, aggregation: 'token-mean', beta: 0.1 },
    };
    await trainStep(model, adapter, optimizer, seqs, stepOptions(objective, 13)); // warm-up
    const before = tf.memory().numTensors;
    for (let step = 0; step < 3; step++) {
      const result = await trainStep(model, adapter, optimizer, seqs, stepOptions(objective, 13));
      expect(result.microBatches.every((batch) => batch.klSum !== undefined)).toBe(true);
    }
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
    optimizer.dispose();
  });

  it('moves every adapter tensor and no base tensor', async () => {
    const { model, optimizer } = setup();
    const base = await Promise.all(model.baseTensors().map((t) => t.data()));
    const adapterBefore = await Promise.all(model.trainableVariables(adapter).map((v) => v.data()));
    await trainStep(model, adapter, optimizer, [sequence('a', idsA, 6, 1)], stepOptions(grpo('cispo')));
    const baseAfter = await Promise.all(model.baseTensors().map((t) => t.data()));
    const adapterAfter = await Promise.all(model.trainableVariables(adapter).map((v) => v.data()));
    for (const [index, data] of baseAfter.entries()) expect(data).toEqual(base[index]);
    for (const [index, data] of adapterAfter.entries()) expect(data).not.toEqual(adapterBefore[index]);
    model.dispose();
    optimizer.dispose();
  });
});

describe('trainStep: replay beside a GRPO step', () => {
  it('adds weight × the replayed token-mean NLL gradient to the GRPO gradient, and reports that NLL', async () => {
    const seqs = [sequence('a', idsA, 5, 1), sequence('b', idsB, 3, -1)];
    const replayed = [sequence('r1', idsB, 4, 1), sequence('r2', idsA.slice(0, 10), 6, 1)];
    const weight = 0.5;
    const { model, optimizer } = setup();
    // The two parts by hand, each over its own normaliser, before the step moves the adapter.
    const part = async (set: readonly TrainingSequence[], objective: Objective) =>
      sequenceGradients(
        model,
        adapter,
        set,
        stepNormaliser(set.map((s) => s.trainedTokens)),
        stepOptions(objective),
      );
    const policy = await part(seqs, grpo('cispo'));
    const sft = await part(replayed, { kind: 'sft' });
    const expectedNorm = tf.tidy(() =>
      Math.sqrt(
        policy.grads.reduce(
          (sum, grad, index) =>
            sum +
            (tf
              .sum(tf.square(tf.add(grad, tf.mul(sft.grads[index] as tf.Tensor, weight))))
              .dataSync()[0] as number),
          0,
        ),
      ),
    );
    tf.dispose([...policy.grads, ...sft.grads]);
    const logprobs = await trainedLogprobs(model, replayed);
    const nll = -logprobs.reduce((sum, row) => sum + row.sum, 0) / (4 + 6);

    const before = tf.memory().numTensors;
    const result = await trainStep(model, adapter, optimizer, seqs, {
      ...stepOptions(grpo('cispo')),
      replay: { sequences: replayed, weight },
    });
    expect(tf.memory().numTensors).toBe(before);
    expect(Math.abs(result.gradNorm - expectedNorm) / expectedNorm).toBeLessThan(1e-4);
    expect(result.replay?.sequences).toBe(2);
    const replayLoss = result.replay?.microBatches.reduce((sum, batch) => sum + batch.loss, 0) ?? Number.NaN;
    expect(Math.abs(replayLoss - nll)).toBeLessThan(1e-5);
    // The GRPO part's own sums are reported apart, unchanged by the replay.
    expect(result.microBatches.reduce((sum, batch) => sum + batch.tokens, 0)).toBe(8);
    model.dispose();
    optimizer.dispose();
  });
});
