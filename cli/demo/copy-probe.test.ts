// The copy probe on the demo's real tokenizer and demonstrations: it finds exactly the start key, the
// next keys and the value of each solved episode (checked against the task's own chain), weighs those
// tokens only, and scores an engine's model by argmax at them (a random adapter-free model is near chance).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { giveUpAnswer } from '../../edge/environments/multi-hop.ts';
import type { ChatMessage } from '../../protocol/chat.ts';
import { initModelDir } from '../../model/init-model-dir.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { loadTokenizer } from '../../model/tokenizer/load-tokenizer.ts';
import { useWasm } from '../../test/train/support/tiny-policy.ts';
import { TfjsEngine } from '../../trainer/engine/tfjs/tfjs-engine.ts';
import { buildBatch } from '../../trainer/train/build-batch.ts';
import {
  type CopyAccuracy,
  copyAccuracy,
  copyReached,
  copyTargets,
  copyWeighted,
  describeCopyAccuracy,
  weakestSymbol,
} from './copy-probe.ts';
import { demoExtraPieces } from './start-services.ts';
import { probeDemonstrationLines } from './warm-start.ts';

let dir: string;
let tokenizer: ChatTokenizer;
let engine: TfjsEngine;
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
  [tokenizer, engine] = await Promise.all([
    loadTokenizer(dir),
    TfjsEngine.open(dir, { workers: 1, log: () => {} }),
  ]);
  model = engine.runtime;
});

afterAll(async () => {
  await engine?.close();
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
  it("finds the start key, each next key, the value and the answer's end of a solved episode, in order", () => {
    const lines = probeDemonstrationLines(6, 3);
    rendered(6, 3).forEach((sequence, index) => {
      const messages = (JSON.parse(lines[index] as string) as { messages: ChatMessage[] }).messages;
      const calls = messages.flatMap((message) =>
        message.role === 'assistant' && message.tool_calls
          ? message.tool_calls.map((call) => (JSON.parse(call.function.arguments) as { key: string }).key)
          : [],
      );
      const answer = /"([0-9])"/.exec(String(messages.at(-1)?.content))?.[1] as string;
      const targets = copyTargets(sequence, decode);
      expect(targets.map((target) => target.kind)).toEqual([
        'startKey',
        ...new Array(calls.length - 1).fill('nextKey'),
        'value',
        'answerEnd',
      ]);
      expect(targets.map((target) => target.symbol)).toEqual([...calls, answer, answer]);
      // Each target predicts its own symbol, but the answer's end predicts the quote that closes it.
      expect(targets.map((target) => decode(sequence.ids[target.position + 1] as number))).toEqual([
        ...calls,
        answer,
        '"',
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
    const accuracy = await copyAccuracy(engine, sequences, decode, {
      padTokenId: tokenizer.padTokenId,
      adapter: false,
    });
    const expected = sequences.map((sequence) => copyTargets(sequence, decode));
    expect(accuracy.startKey.total).toBe(8);
    expect(accuracy.value.total).toBe(8);
    expect(accuracy.answerEnd.total).toBe(8);
    expect(accuracy.nextKey.total).toBe(expected.flat().length - 24);
    for (const kind of ['startKey', 'nextKey', 'value', 'answerEnd'] as const) {
      const bySymbol = Object.values(accuracy[kind].bySymbol);
      expect(bySymbol.reduce((sum, count) => sum + count.total, 0)).toBe(accuracy[kind].total);
      expect(bySymbol.reduce((sum, count) => sum + count.right, 0)).toBe(accuracy[kind].right);
    }
    // 576 tokens: an untrained model's argmax is almost never the copied key or digit.
    expect(accuracy.value.right + accuracy.startKey.right).toBeLessThan(4);
    expect(copyReached(accuracy, 0.95)).toBe(false);
    expect(accuracy.quit).toBeUndefined();
  });

  it("reads the probability of giving up at once as the mean over demonstrations of the first trained token's", async () => {
    const sequences = rendered(5, 2);
    const quitTokenId = tokenizer.encode(giveUpAnswer)[0] as number;
    const { quit } = await copyAccuracy(engine, sequences, decode, {
      padTokenId: tokenizer.padTokenId,
      adapter: false,
      quitTokenId,
    });
    const expected = await Promise.all(
      sequences.map(async (sequence) => {
        const opening = sequence.targetMask.indexOf(1);
        const probabilities = tf.tidy(() =>
          tf.softmax(model.forwardLogits([sequence.ids], { adapter: null })),
        );
        const row = (await probabilities.data()) as Float32Array;
        probabilities.dispose();
        return row[opening * model.config.vocabSize + quitTokenId] as number;
      }),
    );
    expect(quit).toBeCloseTo(expected.reduce((sum, p) => sum + p, 0) / expected.length, 5);
    expect(quit).toBeGreaterThan(0);
  });
});

describe('probeDemonstrationLines', () => {
  it('holds each answer digit count/10 times, the first count mod 10 digits once more', () => {
    const digits = probeDemonstrationLines(23, 1).map(
      (line) =>
        /"([0-9])"/.exec(
          String((JSON.parse(line) as { messages: ChatMessage[] }).messages.at(-1)?.content),
        )?.[1],
    );
    const counts = Array.from({ length: 10 }, (_, digit) => digits.filter((d) => d === String(digit)).length);
    expect(counts).toEqual([3, 3, 3, 2, 2, 2, 2, 2, 2, 2]);
  });
});

describe('the stop rule', () => {
  const count = (right: number, total: number) => ({ right, total });
  /** Every kind 19/20 right; value's misses all on one digit when `weakDigit`. */
  const reading = (weakDigit: boolean): CopyAccuracy => {
    const spread = { a: count(10, 10), b: count(9, 10) };
    const value = weakDigit
      ? { '1': count(0, 1), '2': count(19, 19) }
      : { '1': count(10, 10), '2': count(9, 10) };
    return {
      startKey: { ...count(19, 20), bySymbol: spread },
      nextKey: { ...count(19, 20), bySymbol: spread },
      value: { ...count(19, 20), bySymbol: value },
      answerEnd: { ...count(20, 20), bySymbol: { '1': count(10, 10), '2': count(10, 10) } },
    };
  };

  it('passes when every kind and its weakest symbol reach the share', () => {
    expect(copyReached(reading(false), 0.9)).toBe(true);
    expect(copyReached(reading(false), 0.95)).toBe(false);
  });

  it('refuses a kind whose total passes while one symbol fails', () => {
    expect(copyReached(reading(true), 0.9)).toBe(false);
    expect(weakestSymbol(reading(true), 'value')).toEqual({ symbol: '1', share: 0, count: count(0, 1) });
    expect(describeCopyAccuracy(reading(true))).toBe(
      'start key 95% (weakest "b" 9/10), next key 95% (weakest "b" 9/10), value 95% (weakest "1" 0/1), answer end 100%',
    );
  });
});
