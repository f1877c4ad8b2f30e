import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AdamW, type AdamWOptions } from './adamw.ts';
import { expectClose } from '../../test/support/max-difference.ts';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const options: AdamWOptions = { learningRate: 0.1, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1 };

describe('AdamW', () => {
  it('matches two steps of hand arithmetic', () => {
    const theta = tf.variable(tf.tensor1d([1, -2]));
    const optimiser = new AdamW([theta], options);
    // Step 1, g = [0.5, −0.1]:
    //   decay θ·(1 − 0.1·0.1) = [0.99, −1.98]
    //   m = 0.1·g = [0.05, −0.01]; v = 0.01·g² = [0.0025, 0.0001]
    //   m̂ = m / (1 − 0.9) = [0.5, −0.1]; √v̂ = √(v / (1 − 0.99)) = [0.5, 0.1]; m̂ / √v̂ = [1, −1] (ε negligible)
    //   θ = [0.99 − 0.1, −1.98 + 0.1] = [0.89, −1.88]
    tf.tidy(() => optimiser.applyGradients([tf.tensor1d([0.5, -0.1])]));
    expectClose(theta.dataSync(), [0.89, -1.88], 1e-6);
    // Step 2, g = [0.5, 0.1]:
    //   decay: [0.89·0.99, −1.88·0.99] = [0.8811, −1.8612]
    //   m = 0.9·[0.05, −0.01] + 0.1·[0.5, 0.1] = [0.095, 0.001]
    //   v = 0.99·[0.0025, 0.0001] + 0.01·[0.25, 0.01] = [0.004975, 0.000199]
    //   m̂ = m / (1 − 0.81) = [0.5, 0.00526316]; v̂ = v / (1 − 0.9801) = [0.25, 0.01] → √ = [0.5, 0.1]
    //   θ = [0.8811 − 0.1·1, −1.8612 − 0.1·0.0526316] = [0.7811, −1.86646316]
    tf.tidy(() => optimiser.applyGradients([tf.tensor1d([0.5, 0.1])]));
    expectClose(theta.dataSync(), [0.7811, -1.86646316], 1e-6);
    expect(optimiser.step).toBe(2);
    optimiser.dispose();
    theta.dispose();
  });

  it("equals tfjs's own Adam when weight decay is 0 (an independent reference)", () => {
    const start = [[0.3, -0.7, 1.2]];
    const ours = tf.variable(tf.tensor2d(start));
    const theirs = tf.variable(tf.tensor2d(start));
    const optimiser = new AdamW([ours], { ...options, weightDecay: 0, learningRate: 0.05 });
    const reference = tf.train.adam(0.05, 0.9, 0.99, 1e-8);
    const gradients = [
      [0.2, -0.4, 0.05],
      [-0.1, 0.3, 0.5],
      [0.7, 0.0, -0.2],
    ];
    for (const g of gradients) {
      tf.tidy(() => {
        optimiser.applyGradients([tf.tensor2d([g])]);
        reference.applyGradients([{ name: theirs.name, tensor: tf.tensor2d([g]) }]);
      });
    }
    expectClose(ours.dataSync(), Array.from(theirs.dataSync()), 1e-6);
    optimiser.dispose();
    reference.dispose();
    tf.dispose([ours, theirs]);
  });

  it('round-trips its state, so a resumed optimiser takes the same next step', async () => {
    const a = tf.variable(tf.tensor1d([1, 2, 3]));
    const first = new AdamW([a], options);
    tf.tidy(() => first.applyGradients([tf.tensor1d([0.1, -0.2, 0.3])]));
    const state = await first.getState();
    expect(state.step).toBe(1);
    expect(state.moments[0]?.shape).toEqual([3]);
    // m after one step = 0.1·g
    expectClose(state.moments[0]?.m ?? [], [0.01, -0.02, 0.03], 1e-7);

    const b = tf.variable(a.clone());
    const resumed = new AdamW([b], options);
    resumed.setState(state);
    const g = [0.4, 0.1, -0.3];
    tf.tidy(() => {
      first.applyGradients([tf.tensor1d(g)]);
      resumed.applyGradients([tf.tensor1d(g)]);
    });
    expectClose(b.dataSync(), Array.from(a.dataSync()), 0);
    expect(resumed.step).toBe(2);
    tf.dispose([a, b]);
    first.dispose();
    resumed.dispose();
  });

  it('names mismatched state, gradients and options', async () => {
    const v = tf.variable(tf.zeros([2, 2]));
    const optimiser = new AdamW([v], options);
    const state = await optimiser.getState();
    const wrong = {
      step: 1,
      moments: [{ ...state.moments[0]!, shape: [4], m: new Float32Array(4), v: new Float32Array(4) }],
    };
    expect(() => optimiser.setState(wrong)).toThrow(
      /moment 0 .* has shape \[4\], but variable .* is \[2,2\]/,
    );
    expect(() => optimiser.setState({ step: 0, moments: [] })).toThrow(/0 moments for 1 variables/);
    expect(() => tf.tidy(() => optimiser.applyGradients([tf.zeros([3])]))).toThrow(
      /gradient 0 \[3\] does not match/,
    );
    expect(() => new AdamW([v], { ...options, beta2: 1 })).toThrow(/beta2 must be in \[0, 1\)/);
    optimiser.dispose();
    v.dispose();
  });

  it('keeps the tensor count flat across steps', () => {
    const v = tf.variable(tf.ones([4]));
    const optimiser = new AdamW([v], options);
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) tf.tidy(() => optimiser.applyGradients([tf.fill([4], 0.1 * (i + 1))]));
    expect(tf.memory().numTensors).toBe(before);
    optimiser.dispose();
    expect(tf.memory().numTensors).toBe(before - 2); // the m and v variables
    v.dispose();
  });
});
