// The copy probe on the demo's real tokenizer and demonstrations: it finds exactly the start key, the
// next keys and the value of each solved episode (checked against the task's own chain), weighs those
// tokens only, and scores a model by argmax at them (a random adapter-free model is near chance).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleMultiHopTask } from '../../edge/environments/multi-hop.ts';
import { initModelDir } from '../../model/init-model-dir.ts';
import { loadModel, type PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { loadTokenizer } from '../../model/tokenizer/load-tokenizer.ts';
import { useWasm } from '../../test/train/support/tiny-policy.ts';
import { buildBatch } from '../../trainer/train/build-batch.ts';
import { copyAccuracy, copyTargets, copyWeighted } from './copy-probe.ts';
import { demoExtraPieces } from './start-services.ts';
import { probeDemonstrationLines } from './warm-start.ts';

let dir: string;
let tokenizer: ChatTokenizer;
let model: PolicyModel;

beforeAll(async () => {
  await useWasm();
  dir = await mkdtemp(join(tmpdir(), 'edgerl-copy-probe-'));
  await initModelDir(dir, {
    preset: 'tiny',
    architecture: 'qwen2',
    seed: 1,
    dtype: 'F32',
    embeddingStd: 0.2,
    extraPieces: demoExtraPieces,
  });
  [tokenizer, model] = await Promise.all([loadTokenizer(dir), loadModel(dir)]);
});

afterAll(async () => {
  model?.dispose();
  await rm(dir, { recursive: true, force: true });
});

function rendered(count: number, seed: number) {
  const inputs = probeDemonstrationLines(count, seed).map((line, index) => ({
    trajectoryId: `probe:${index}`,
    groupId: null,
    ...(JSON.parse(line) as { messages: never; tools: never }),
    advantage: 1,
  }));
  return buildBatch(tokenizer, inputs, { vocabSize: model.config.vocabSize, maxTokens: 4096 }).sequences;
}

const decode = (id: number) => tokenizer.decodeToken(id);

describe('copyTargets', () => {
  it('finds the start key, each next key and the value of a solved episode, in order', () => {
    const sequences = rendered(6, 3);
    sequences.forEach((sequence, index) => {
      const task = sampleMultiHopTask('validation', 2_000_000 + 3 * 10_007 + index);
      const chain = [task.start];
      while (chain.length < task.hops) chain.push(task.table[chain.at(-1) as string] as string);
      const targets = copyTargets(sequence, decode);
      expect(targets.map((target) => target.kind)).toEqual([
        'startKey',
        ...new Array(task.hops - 1).fill('nextKey'),
        'value',
      ]);
      expect(targets.map((target) => decode(sequence.ids[target.position + 1] as number))).toEqual([
        ...chain,
        task.answer,
      ]);
    });
  });

  it('weighs the copied tokens only', () => {
    const [sequence] = rendered(1, 5);
    const weighted = copyWeighted(sequence as NonNullable<typeof sequence>, decode, 4);
    const positions = copyTargets(weighted, decode).map((target) => target.position);
    expect(weighted.lossWeights).toEqual(
      weighted.targetMask.map((_, at) => (positions.includes(at) ? 4 : 1)),
    );
    expect(weighted.lossWeights?.filter((weight) => weight === 4)).toHaveLength(positions.length);
  });
});

describe('copyAccuracy', () => {
  it('counts every target, and a random base model copies little', async () => {
    const sequences = rendered(8, 7);
    const accuracy = await copyAccuracy(model, null, sequences, decode, {
      padTokenId: tokenizer.padTokenId,
      batchSize: 3,
    });
    const expected = sequences.map((sequence) => copyTargets(sequence, decode));
    expect(accuracy.startKey.total).toBe(8);
    expect(accuracy.value.total).toBe(8);
    expect(accuracy.nextKey.total).toBe(expected.flat().length - 16);
    // 576 tokens: an untrained model's argmax is almost never the copied key or digit.
    expect(accuracy.value.right + accuracy.startKey.right).toBeLessThan(4);
  });
});
