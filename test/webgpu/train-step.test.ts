// The trainer's optimiser step (trainer/train/train-step.ts: micro-batched forward + backward into the
// LoRA adapter, GRPO's CISPO loss, global-norm clipping, AdamW) on the webgpu backend gives the
// numbers it gives on wasm: two steps from the same seed, compared loss by loss and weight by weight.
// Runs only when EDGERL_TEST_WEBGPU names the backend (`webgpu`, or `webgpu:software` over lavapipe in
// CI: scripts/setup-software-vulkan.sh); it needs a Vulkan driver.
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { AdamW } from '../../trainer/grpo/adamw.ts';
import { clipDefaults } from '../../trainer/grpo/loss-config.ts';
import { selectBackend } from '../../model/backend.ts';
import type { TrainingSequence } from '../../trainer/engine/training-sequence.ts';
import { trainStep } from '../../trainer/engine/tfjs/train-step.ts';
import type { EngineStepResult } from '../../trainer/engine/train-engine.ts';
import { tinyModel } from '../train/support/tiny-policy.ts';

const requested = process.env.EDGERL_TEST_WEBGPU?.trim() || undefined;

const learningRate = 1e-3;

/** A sequence trained on its last `trained` tokens; `old` offsets the recorded logprob (NaN: on-policy). */
function sequence(
  id: string,
  ids: number[],
  trained: number,
  advantage: number,
  old: number,
): TrainingSequence {
  const length = ids.length - 1;
  const targetMask = Array.from({ length }, (_, t) => (t >= length - trained ? 1 : 0));
  return {
    trajectoryId: id,
    groupId: null,
    ids,
    targetMask,
    oldLogprobs: targetMask.map((bit) => (bit ? old : Number.NaN)),
    onPolicy: targetMask.map((bit) => (bit && Number.isNaN(old) ? 1 : 0)),
    advantage,
    trainedTokens: trained,
  };
}

// Three sequences of different lengths in two micro-batches (16 padded tokens each at most), one
// on-policy and two with recorded logprobs far enough from the model's (≈ −ln 576 ≈ −6.4) to clip.
const sequences = [
  sequence('a', [10, 72, 101, 108, 108, 111, 44, 32, 119, 111], 5, 1, Number.NaN),
  sequence('b', [10, 72, 105, 33, 32, 87, 104, 111], 3, -1, -9),
  sequence('c', [10, 87, 104, 121, 63, 32], 2, 0.5, -4),
];

interface Run {
  readonly steps: EngineStepResult[];
  readonly adapter: Float32Array[];
}

async function twoSteps(): Promise<Run> {
  const model = tinyModel(1);
  model.addAdapter(
    'policy',
    { r: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj'], initLoraWeights: false },
    { seed: 3 },
  );
  const optimizer = new AdamW(model.trainableVariables('policy'), {
    learningRate,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.1,
  });
  const options = {
    objective: {
      kind: 'grpo',
      loss: { lossKind: 'cispo', clip: clipDefaults.cispo, aggregation: 'token-mean', beta: 0 },
    },
    microBatchTokens: 20,
    maxGradNorm: 0.05, // small enough that clipping scales the step
    learningRate,
    padTokenId: 0,
  } as const;
  const steps = [
    await trainStep(model, 'policy', optimizer, sequences, options),
    await trainStep(model, 'policy', optimizer, sequences, options),
  ];
  const adapter = await Promise.all(
    model.trainableVariables('policy').map(async (v) => Float32Array.from(await v.data())),
  );
  optimizer.dispose();
  model.dispose();
  return { steps, adapter };
}

// Needs a Vulkan driver and the optional webgpu packages; CI runs it over lavapipe (see the header).
describe.skipIf(requested === undefined)(`trainStep on ${requested ?? 'webgpu'}`, () => {
  it('two GRPO steps give the losses, gradient norms and adapter weights they give on wasm', async () => {
    await selectBackend({ requested: 'wasm', log: () => {} });
    const wasm = await twoSteps();
    await selectBackend({ requested, log: () => {} });
    expect(tf.getBackend()).toBe('webgpu');
    const before = tf.memory().numTensors;
    const gpu = await twoSteps();
    expect(tf.memory().numTensors).toBe(before);

    for (const [step, result] of gpu.steps.entries()) {
      const reference = wasm.steps[step] as EngineStepResult;
      expect(result.microBatches).toHaveLength(2);
      // Clipping must have happened, or the comparison below would not cover it.
      expect(reference.gradNorm).toBeGreaterThan(0.05);
      expect(Math.abs(result.gradNorm - reference.gradNorm) / reference.gradNorm).toBeLessThan(1e-4);
      for (const [index, sums] of result.microBatches.entries()) {
        const want = reference.microBatches[index];
        expect(sums.tokens).toBe(want?.tokens);
        expect(sums.clippedLow + sums.clippedHigh).toBe((want?.clippedLow ?? 0) + (want?.clippedHigh ?? 0));
        expect(Math.abs(sums.loss - (want?.loss as number))).toBeLessThan(1e-5);
      }
    }
    const clipped = wasm.steps[0]?.microBatches.reduce((n, s) => n + s.clippedLow + s.clippedHigh, 0);
    expect(clipped).toBeGreaterThan(0);
    // Each AdamW step moves a weight by about lr = 1e-3; the backends may differ by 1 % of that.
    let worst = 0;
    gpu.adapter.forEach((values, index) => {
      const other = wasm.adapter[index] as Float32Array;
      for (let i = 0; i < values.length; i++)
        worst = Math.max(worst, Math.abs((values[i] as number) - (other[i] as number)));
    });
    console.log(`adapter weights after two steps: largest |Δ| webgpu vs wasm = ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(learningRate / 100);
  });
});
