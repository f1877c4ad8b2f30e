// DecodeBatch on the Qwen2 micro fixture: greedy decoding matches the PyTorch reference's
// from-scratch continuation, and every step's logits of rows that joined, decoded beside others and
// outlived their neighbours match an uncached forward pass over the row's whole sequence.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodeBatch } from './decode-batch.ts';
import { loadModel, type PolicyModel } from './policy-model.ts';
import { fixtureDir, useBackend } from '../test/support/model-fixtures.ts';
import { maxAbsDiff } from '../test/support/max-difference.ts';

interface Reference {
  greedy_prompt: number[];
  greedy: number[];
  greedy_adapter: number[];
}

const reference = JSON.parse(readFileSync(join(fixtureDir('qwen2'), 'reference.json'), 'utf8')) as Reference;
const vocab = 128;

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if ((values[i] as number) > (values[best] as number)) best = i;
  return best;
}

function row(logits: Float32Array, index: number): Float32Array {
  return logits.subarray(index * vocab, (index + 1) * vocab);
}

describe('DecodeBatch', () => {
  let model: PolicyModel;
  beforeAll(async () => {
    await useBackend('wasm');
    model = await loadModel(fixtureDir('qwen2'));
    await model.loadAdapter('fixture', join(fixtureDir('qwen2'), 'adapter'));
  });
  afterAll(() => model.dispose());

  /** Last-position logits of an uncached forward pass over `ids` (the independent path). */
  async function uncached(ids: number[], adapter: string | null): Promise<Float32Array> {
    const logits = model.forwardLogits([ids], { adapter });
    const values = (await logits.data()) as Float32Array;
    logits.dispose();
    return values.slice((ids.length - 1) * vocab, ids.length * vocab);
  }

  it('decodes greedily as the reference does, with and without the adapter, in one batch', async () => {
    const batch = new DecodeBatch(model.decoder);
    const prompt = reference.greedy_prompt;
    let logits = await batch.add([
      { prompt, adapter: null },
      { prompt, adapter: model.adapter('fixture') },
    ]);
    const out: number[][] = [[], []];
    for (let i = 0; i < reference.greedy.length; i++) {
      const next = [argmax(row(logits, 0)), argmax(row(logits, 1))];
      out[0]?.push(next[0] as number);
      out[1]?.push(next[1] as number);
      if (i < reference.greedy.length - 1) logits = await batch.step(next);
    }
    expect(out).toEqual([reference.greedy, reference.greedy_adapter]);
    expect(batch.length(0)).toBe(prompt.length + reference.greedy.length - 1);
    batch.dispose();
  });

  it('lets rows join mid-batch and leave, each step matching an uncached pass within 1e-4', async () => {
    const before = tf.memory().numTensors;
    const batch = new DecodeBatch(model.decoder);
    // Row a: base model, 7-token prompt; row b joins after two steps with a 3-token prompt on the
    // adapter; row c (5 tokens) joins after a leaves. Tokens fed are fixed, so the check is exact.
    const seq = { a: [5, 17, 42, 99, 3, 64, 120], b: [7, 8, 9], c: [11, 12, 13, 14, 15] };
    const adapterOf = { a: null, b: 'fixture', c: null } as const;
    let worst = 0;
    const check = async (logits: Float32Array, rows: (keyof typeof seq)[]) => {
      for (const [index, name] of rows.entries()) {
        worst = Math.max(worst, maxAbsDiff(row(logits, index), await uncached(seq[name], adapterOf[name])));
      }
    };
    await check(await batch.add([{ prompt: seq.a, adapter: null }]), ['a']);
    for (const token of [30, 31]) {
      seq.a.push(token);
      await check(await batch.step([token]), ['a']);
    }
    await check(await batch.add([{ prompt: seq.b, adapter: model.adapter('fixture') }]), ['b']);
    expect(batch.size).toBe(2);
    expect(batch.cachedPositions).toBe(9);
    for (const [ta, tb] of [
      [40, 50],
      [41, 51],
    ] as const) {
      seq.a.push(ta);
      seq.b.push(tb);
      await check(await batch.step([ta, tb]), ['a', 'b']);
    }
    batch.retain([1]); // a leaves
    expect(batch.size).toBe(1);
    expect(batch.cachedPositions).toBe(5); // b holds 3 + 2 tokens; the 6 leading padding columns are dropped
    await check(await batch.add([{ prompt: seq.c, adapter: null }]), ['c']);
    for (const [tb, tc] of [
      [52, 60],
      [53, 61],
    ] as const) {
      seq.b.push(tb);
      seq.c.push(tc);
      await check(await batch.step([tb, tc]), ['b', 'c']);
    }
    expect(batch.length(0)).toBe(seq.b.length);
    expect(worst).toBeLessThan(1e-4);
    batch.dispose();
    expect(batch.size).toBe(0);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('rejects bad input, naming the problem', async () => {
    const batch = new DecodeBatch(model.decoder);
    await expect(batch.step([1])).rejects.toThrow(/step got 1 tokens for 0 rows/);
    await expect(batch.add([{ prompt: [], adapter: null }])).rejects.toThrow(
      /joining row 0 has an empty prompt/,
    );
    await expect(batch.add([{ prompt: [1, 128], adapter: null }])).rejects.toThrow(
      /joining row 0, position 1: token id 128 is outside the vocabulary \[0, 128\)/,
    );
    await batch.add([{ prompt: [1, 2], adapter: null }]);
    await expect(batch.step([129])).rejects.toThrow(/row 0: token id 129 is outside/);
    expect(() => batch.retain([1])).toThrow(/row 1 is not in a batch of 1/);
    expect(() => batch.retain([0, 0])).toThrow(/rows repeat/);
    batch.dispose();
  });
});
