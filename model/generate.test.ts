// Generation behaviour on the Qwen2 micro fixture, whose greedy continuation of this prompt is
// 73, 9, 9, 9, … (reference.json, from the PyTorch reference).
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel, type PolicyModel } from './policy-model.ts';
import { fixtureDir, useBackend } from './test-support.ts';

const prompt = [5, 17, 42, 99, 3, 64, 120];
const greedy = { temperature: 0, maxTokens: 6 };

describe('generate', () => {
  let model: PolicyModel;
  beforeAll(async () => {
    await useBackend('wasm');
    model = await loadModel(fixtureDir('qwen2'));
    await model.loadAdapter('fixture', join(fixtureDir('qwen2'), 'adapter'));
  });
  afterAll(() => model.dispose());

  it('stops on a stop token, which it includes, or at maxTokens', async () => {
    const [stopped, long] = await model.generate([prompt, prompt], { ...greedy, stopTokenIds: [9] });
    expect(stopped).toMatchObject({ tokenIds: [73, 9], finishReason: 'stop' });
    expect(stopped?.logprobs).toHaveLength(2);
    expect(long).toEqual(stopped);
    const [capped] = await model.generate([prompt], { ...greedy, maxTokens: 3, stopTokenIds: [] });
    expect(capped).toMatchObject({ tokenIds: [73, 9, 9], finishReason: 'length' });
    // Without stopTokenIds the config's eos_token_id (2) applies; greedy never emits it here.
    const [eos] = await model.generate([prompt], greedy);
    expect(eos?.finishReason).toBe('length');
  });

  it('is reproducible for a seed and differs across seeds', async () => {
    const sample = (seed: number) =>
      model.generate([prompt, [1, 2, 3]], { temperature: 1, maxTokens: 12, seed, stopTokenIds: [] });
    const first = await sample(11);
    expect(await sample(11)).toEqual(first);
    expect((await sample(12)).map((g) => g.tokenIds)).not.toEqual(first.map((g) => g.tokenIds));
  });

  it('uses each row’s adapter in a mixed batch', async () => {
    const [base] = await model.generate([prompt], greedy);
    const [adapted] = await model.generate([prompt], { ...greedy, adapter: 'fixture' });
    const mixed = await model.generate([prompt, prompt], { ...greedy, adapter: ['fixture', null] });
    expect(base?.tokenIds).not.toEqual(adapted?.tokenIds);
    expect(mixed.map((g) => g.tokenIds)).toEqual([adapted?.tokenIds, base?.tokenIds]);
  });

  it('leaves no tensors behind', async () => {
    const before = tf.memory().numTensors;
    await model.generate([prompt, [7, 8]], {
      temperature: 0.8,
      topP: 0.9,
      maxTokens: 5,
      seed: 1,
      adapter: [null, 'fixture'],
    });
    expect(tf.memory().numTensors).toBe(before);
  });

  it('rejects bad requests, naming the problem', async () => {
    await expect(model.generate([prompt], { maxTokens: 0 })).rejects.toThrow(
      /maxTokens must be a positive integer/,
    );
    await expect(model.generate([[]], { maxTokens: 1 })).rejects.toThrow(/prompt 0 is empty/);
    await expect(
      model.generate(
        [
          [1, 2],
          [3, 128],
        ],
        { maxTokens: 1 },
      ),
    ).rejects.toThrow(/row 1, position 1: token id 128 is outside the vocabulary \[0, 128\)/);
    await expect(model.generate([new Array(257).fill(1)], { maxTokens: 1 })).rejects.toThrow(
      /at most 256 positions/,
    );
    await expect(model.generate([prompt], { maxTokens: 1, topP: 2 })).rejects.toThrow(/topP/);
  });
});
