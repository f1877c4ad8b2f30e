// LoRA behaviour on the Qwen2 micro fixture: a zero-B adapter is a no-op, a training step moves
// every adapter tensor and no base tensor, the logprob gradient matches plain autodiff, mixed-adapter
// batches equal separate runs, and no step leaks tensors.
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projections } from './hf-config.ts';
import { resolveLoraConfig, setLoraATrainable } from './lora.ts';
import { loadModel, type PolicyModel } from './policy-model.ts';
import { fixtureDir, useBackend } from '../test/support/model-fixtures.ts';
import { maxAbsDiff } from '../test/support/max-difference.ts';

const ids = [
  [5, 17, 42, 99, 3, 64, 120, 7],
  [1, 2, 77, 8, 127, 31, 12, 90],
];
const all = [...projections];

async function snapshot(tensors: readonly tf.Tensor[]): Promise<Float32Array[]> {
  return Promise.all(tensors.map(async (t) => (await t.data()) as Float32Array));
}

function meanNll(model: PolicyModel, adapter: string): () => tf.Scalar {
  return () => tf.neg(tf.mean(model.forwardLogprobs(ids, { adapter }))) as tf.Scalar;
}

describe('LoRA adapters', () => {
  let model: PolicyModel;
  beforeAll(async () => {
    await useBackend('wasm');
    model = await loadModel(fixtureDir('qwen2'));
  });
  afterAll(() => model.dispose());

  it('validates its config, naming the bad field', () => {
    expect(() => resolveLoraConfig({ r: 0 })).toThrow(/r must be a positive integer, got 0/);
    expect(() => resolveLoraConfig({ targets: ['q_proj', 'lm_head' as 'q_proj'] })).toThrow(
      /unknown LoRA targets lm_head/,
    );
    expect(() => resolveLoraConfig({ dropout: 1 })).toThrow(/dropout must be in \[0, 1\)/);
    expect(resolveLoraConfig({}).targets).toEqual(['q_proj', 'v_proj']); // PEFT's default for Llama/Qwen2
  });

  it('an adapter whose B is zero leaves the logits exactly unchanged', async () => {
    model.addAdapter('zero', { r: 4, alpha: 16, targets: all }, { seed: 1 });
    const base = model.forwardLogits(ids);
    const adapted = model.forwardLogits(ids, { adapter: 'zero' });
    expect(maxAbsDiff(await base.data(), await adapted.data())).toBe(0);
    tf.dispose([base, adapted]);
    model.removeAdapter('zero');
  });

  it('one optimizer step changes every adapter tensor and no base tensor', async () => {
    model.addAdapter('train', { r: 4, alpha: 8, targets: all, initLoraWeights: false }, { seed: 2 });
    const variables = model.trainableVariables('train');
    expect(variables).toHaveLength(2 * all.length * 2); // A and B, 7 projections, 2 layers
    const baseBefore = await snapshot(model.baseTensors());
    const adapterBefore = await snapshot(variables);
    const optimizer = tf.train.adam(1e-3);
    optimizer.minimize(meanNll(model, 'train'), true, variables)?.dispose();
    const adapterAfter = await snapshot(variables);
    const unchanged = variables.filter(
      (_, i) => maxAbsDiff(adapterBefore[i] as Float32Array, adapterAfter[i] as Float32Array) === 0,
    );
    expect(unchanged.map((v) => v.name)).toEqual([]);
    const baseAfter = await snapshot(model.baseTensors());
    const moved = baseAfter.filter((after, i) => maxAbsDiff(after, baseBefore[i] as Float32Array) !== 0);
    expect(moved).toHaveLength(0);
    optimizer.dispose();
    model.removeAdapter('train');
  });

  it('with PEFT init (B = 0) the first step moves B only: ∂L/∂A = scaling·Bᵀ·(∂L/∂y)·xᵀ = 0', async () => {
    model.addAdapter('fresh', { r: 4, alpha: 8, targets: ['q_proj', 'down_proj'] }, { seed: 3 });
    const variables = model.trainableVariables('fresh');
    const before = await snapshot(variables);
    const optimizer = tf.train.sgd(0.1);
    optimizer.minimize(meanNll(model, 'fresh'), true, variables)?.dispose();
    const after = await snapshot(variables);
    const changed = variables.map((v, i) => ({
      name: v.name,
      moved: maxAbsDiff(before[i] as Float32Array, after[i] as Float32Array) > 0,
    }));
    expect(changed.filter((c) => c.name.endsWith('lora_A')).every((c) => !c.moved)).toBe(true);
    expect(changed.filter((c) => c.name.endsWith('lora_B')).every((c) => c.moved)).toBe(true);
    optimizer.dispose();
    model.removeAdapter('fresh');
  });

  it('orthogonal A: scaling·A has orthonormal rows (r ≤ in) or columns (r > in), seeded', async () => {
    const hidden = model.config.hiddenSize;
    for (const r of [4, hidden + 8]) {
      const adapter = model.addAdapter(
        'orth',
        { r, alpha: 2 * r, targets: ['q_proj', 'down_proj'], initA: 'orthogonal' },
        { seed: 5 },
      );
      for (const projection of ['q_proj', 'down_proj'] as const) {
        const aT = adapter.layers[0]?.[projection]?.aT as tf.Variable; // [in, r]
        const [input, rank] = aT.shape as [number, number];
        const scaled = tf.mul(aT, adapter.scaling);
        // r ≤ in: A·Aᵀ = (Aᵀ)ᵀ·Aᵀ [r, r]; r > in: Aᵀ·A [in, in].
        const gram =
          rank <= input ? tf.matMul(scaled, scaled, true, false) : tf.matMul(scaled, scaled, false, true);
        const eye = tf.eye(Math.min(input, rank));
        expect(maxAbsDiff(await gram.data(), await eye.data())).toBeLessThan(1e-5);
        tf.dispose([scaled, gram, eye]);
      }
      const again = model.addAdapter(
        'orth2',
        { r, alpha: 2 * r, targets: ['q_proj', 'down_proj'], initA: 'orthogonal' },
        { seed: 5 },
      );
      const first = await adapter.layers[1]?.down_proj?.aT.data();
      const second = await again.layers[1]?.down_proj?.aT.data();
      expect(maxAbsDiff(first as Float32Array, second as Float32Array)).toBe(0);
      model.removeAdapter('orth');
      model.removeAdapter('orth2');
    }
    expect(() => resolveLoraConfig({ initA: 'xavier' as 'orthogonal' })).toThrow(
      /initA must be one of kaiming-uniform, orthogonal, got xavier/,
    );
  });

  it('a frozen A (LoRA-FA) leaves only the Bs trainable, and a step moves B only', async () => {
    const adapter = model.addAdapter(
      'fa',
      { r: 4, alpha: 8, targets: all, initLoraWeights: false, initA: 'orthogonal' },
      { seed: 6 },
    );
    setLoraATrainable(adapter, false);
    const variables = model.trainableVariables('fa');
    expect(variables).toHaveLength(all.length * 2); // B only, 7 projections, 2 layers
    expect(variables.every((v) => v.name.endsWith('lora_B'))).toBe(true);
    const aBefore = await adapter.layers[0]?.q_proj?.aT.data();
    const optimizer = tf.train.adam(1e-2);
    optimizer.minimize(meanNll(model, 'fa'), true, variables)?.dispose();
    const aAfter = await adapter.layers[0]?.q_proj?.aT.data();
    expect(maxAbsDiff(aBefore as Float32Array, aAfter as Float32Array)).toBe(0);
    setLoraATrainable(adapter, true);
    expect(model.trainableVariables('fa')).toHaveLength(all.length * 4);
    optimizer.dispose();
    model.removeAdapter('fa');
  });

  it('does not grow the tensor count across repeated steps, and frees everything on removal', async () => {
    const start = tf.memory().numTensors;
    model.addAdapter('loop', { r: 2, targets: all, initLoraWeights: false }, { seed: 4 });
    const variables = model.trainableVariables('loop');
    const optimizer = tf.train.adam(1e-3);
    const counts: number[] = [];
    for (let step = 0; step < 4; step++) {
      optimizer.minimize(meanNll(model, 'loop'), true, variables)?.dispose();
      counts.push(tf.memory().numTensors);
    }
    // Adam creates its two moment slots per variable on the first step; after that the count is flat.
    expect(counts.slice(1)).toEqual([counts[1], counts[1], counts[1]]);
    optimizer.dispose();
    model.removeAdapter('loop');
    expect(tf.memory().numTensors).toBe(start);
  });

  it('the chunked logprob gradient equals plain autodiff through log-softmax', async () => {
    model.addAdapter('grad', { r: 4, alpha: 8, targets: all, initLoraWeights: false }, { seed: 5 });
    const variables = model.trainableVariables('grad');
    const custom = tf.variableGrads(
      () => tf.sum(model.forwardLogprobs(ids, { adapter: 'grad' })) as tf.Scalar,
      variables,
    );
    const plain = tf.variableGrads(
      () =>
        tf.tidy(() => {
          const logits = model.forwardLogits(ids, { adapter: 'grad' }); // [2, 8, 128]
          const context = tf.slice(logits, [0, 0, 0], [2, 7, -1]); // [2, 7, 128]
          const targets = tf.tensor2d(
            ids.map((row) => row.slice(1)),
            [2, 7],
            'int32',
          );
          return tf.sum(tf.mul(tf.logSoftmax(context), tf.oneHot(targets, 128))) as tf.Scalar;
        }),
      variables,
    );
    expect(
      Math.abs((await custom.value.data())[0] as number) - Math.abs((await plain.value.data())[0] as number),
    ).toBeLessThan(1e-3);
    let worst = 0;
    for (const v of variables) {
      const a = await (custom.grads[v.name] as tf.Tensor).data();
      const b = await (plain.grads[v.name] as tf.Tensor).data();
      const scale = Math.max(...Array.from(b, Math.abs));
      worst = Math.max(worst, maxAbsDiff(a, b) / scale);
    }
    console.log(`custom vs autodiff logprob gradient: largest relative |Δ| = ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(1e-4);
    tf.dispose([custom.value, plain.value, ...Object.values(custom.grads), ...Object.values(plain.grads)]);
    model.removeAdapter('grad');
  });

  it('applies LoRA dropout only while training', async () => {
    model.addAdapter(
      'drop',
      { r: 4, targets: ['q_proj', 'up_proj'], dropout: 0.5, initLoraWeights: false },
      { seed: 8 },
    );
    const read = async (training: boolean) => {
      const out = model.forwardLogits(ids, { adapter: 'drop', training });
      const data = (await out.data()) as Float32Array;
      out.dispose();
      return data;
    };
    const [evalA, evalB, trainA, trainB] = [
      await read(false),
      await read(false),
      await read(true),
      await read(true),
    ];
    expect(maxAbsDiff(evalA, evalB)).toBe(0); // inference is deterministic
    expect(maxAbsDiff(trainA, evalA)).toBeGreaterThan(1e-3); // half the adapter inputs dropped
    expect(maxAbsDiff(trainA, trainB)).toBeGreaterThan(1e-3); // a fresh mask each call
    model.removeAdapter('drop');
  });

  it('holds several adapters and applies one per row in a mixed batch', async () => {
    model.addAdapter('a', { r: 2, targets: ['q_proj', 'up_proj'], initLoraWeights: false }, { seed: 6 });
    model.addAdapter('b', { r: 3, targets: ['v_proj', 'o_proj'], initLoraWeights: false }, { seed: 7 });
    const rows = [ids[0], ids[1], ids[0]] as number[][];
    const mixed = await model.forwardLogits(rows, { adapter: ['a', null, 'b'] }).data();
    const per = 8 * 128;
    const alone = [
      await model.forwardLogits([rows[0] as number[]], { adapter: 'a' }).data(),
      await model.forwardLogits([rows[1] as number[]]).data(),
      await model.forwardLogits([rows[2] as number[]], { adapter: 'b' }).data(),
    ];
    for (let row = 0; row < 3; row++) {
      expect(maxAbsDiff(mixed.subarray(row * per, (row + 1) * per), alone[row] as Float32Array)).toBeLessThan(
        1e-5,
      );
    }
    // The adapters really differ from the base model and from each other.
    expect(maxAbsDiff(alone[0] as Float32Array, mixed.subarray(2 * per))).toBeGreaterThan(1e-2);
    expect(() => model.forwardLogits(rows, { adapter: 'missing' })).toThrow(
      /no adapter named "missing"; loaded: a, b/,
    );
    model.removeAdapter('a');
    model.removeAdapter('b');
  });
});
