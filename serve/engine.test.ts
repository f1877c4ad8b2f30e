// The batching engine on the Qwen2 micro fixture, without HTTP: sequences submitted together prefill
// and decode together; a sequence that arrives mid-batch joins at the next step while the others go
// on; every output equals generate() run alone; aborts, failing listeners and shutdown end only the
// sequences they concern; nothing leaks.
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel, type PolicyModel } from '../model/policy-model.ts';
import { fixtureDir, useBackend } from '../test/support/model-fixtures.ts';
import { LocalDecodeRuntime } from './decode-runtime.ts';
import { type EngineEnd, type EngineSequence, ServeEngine } from './engine.ts';
import type { SampledToken } from './row-sampler.ts';
import { generate } from '../test/support/generate.ts';

const greedy = { temperature: 0, topP: 1, topK: 0 };

interface Recorder {
  sequence: EngineSequence;
  tokens: number[];
  done: Promise<EngineEnd | 'finished'>;
}

/** A greedy sequence that finishes after `count` tokens and records them. */
function record(prompt: number[], count: number, onEach?: (tokens: number[]) => void): Recorder {
  const tokens: number[] = [];
  let settle: (end: EngineEnd | 'finished') => void = () => {};
  const done = new Promise<EngineEnd | 'finished'>((resolve) => {
    settle = resolve;
  });
  const sequence: EngineSequence = {
    promptIds: prompt,
    sampling: { sampling: greedy, topLogprobs: 0 },
    seed: 0,
    onToken(token: SampledToken) {
      tokens.push(token.tokenId);
      onEach?.(tokens);
      const finished = tokens.length >= count;
      if (finished) settle('finished');
      return finished;
    },
    onEnd: (end) => settle(end),
  };
  return { sequence, tokens, done };
}

describe('ServeEngine', () => {
  let model: PolicyModel;
  let engine: ServeEngine;
  const prompts = Array.from({ length: 8 }, (_, i) => [5 + i, 17, 42 + i, 99, 3 + i]);

  beforeAll(async () => {
    await useBackend('wasm');
    model = await loadModel(fixtureDir('qwen2'));
    engine = new ServeEngine(new LocalDecodeRuntime(model), 'micro', {
      maxModelLen: 256,
      maxNumSeqs: 16,
      maxPrefillTokens: 4096,
    });
    await engine.loadAdapter('fixture', join(fixtureDir('qwen2'), 'adapter'));
  });
  afterAll(async () => {
    await engine.close();
    model.dispose();
  });

  async function alone(prompt: number[], count: number, adapter: string | null = null): Promise<number[]> {
    const [generation] = await generate(model, [prompt], {
      temperature: 0,
      maxTokens: count,
      stopTokenIds: [],
      adapter: adapter === null ? null : engine.registry.list().find((e) => e.name === adapter)?.key,
    });
    return generation?.tokenIds ?? [];
  }

  it('prefills and decodes sequences submitted together as one batch', async () => {
    const before = engine.stats();
    const rows = prompts.map((prompt) => record(prompt, 6));
    engine.submit(
      undefined,
      rows.slice(0, 4).map((row) => row.sequence),
    );
    engine.submit(
      'fixture',
      rows.slice(4).map((row) => row.sequence),
    );
    await Promise.all(rows.map((row) => row.done));
    const after = engine.stats();
    expect(after.prefills - before.prefills).toBe(1);
    expect(after.prefillRows - before.prefillRows).toBe(8);
    // 6 tokens each: 1 from the prefill, then 5 steps holding all 8 rows (base and adapter rows mixed).
    expect(after.decodeSteps - before.decodeSteps).toBe(5);
    expect((after.rowsPerStep[8] ?? 0) - (before.rowsPerStep[8] ?? 0)).toBe(5);
    for (const [i, row] of rows.entries()) {
      expect(row.tokens).toEqual(await alone(prompts[i] as number[], 6, i < 4 ? null : 'fixture'));
    }
  });

  it('lets a sequence join a running batch at the next step without restarting it', async () => {
    const before = engine.stats();
    let late: Recorder | undefined;
    const early = record(prompts[0] as number[], 10, (tokens) => {
      if (tokens.length === 3) {
        late = record(prompts[1] as number[], 4);
        engine.submit(undefined, [late.sequence]);
      }
    });
    engine.submit(undefined, [early.sequence]);
    await early.done;
    await late?.done;
    const after = engine.stats();
    expect(after.prefills - before.prefills).toBe(2);
    // early: 9 steps; late joins after early's 3rd token and decodes 3 steps beside it.
    expect(after.decodeSteps - before.decodeSteps).toBe(9);
    expect((after.rowsPerStep[2] ?? 0) - (before.rowsPerStep[2] ?? 0)).toBe(3);
    expect(early.tokens).toEqual(await alone(prompts[0] as number[], 10));
    expect(late?.tokens).toEqual(await alone(prompts[1] as number[], 4));
  });

  it('ends aborted and failing sequences alone; the rest finish', async () => {
    const controller = new AbortController();
    const aborted = record(prompts[2] as number[], 50, (tokens) => {
      if (tokens.length === 2) controller.abort();
    });
    const failing = record(prompts[3] as number[], 50, (tokens) => {
      if (tokens.length === 3) throw new Error('listener bug');
    });
    const healthy = record(prompts[4] as number[], 8);
    engine.submit(undefined, [aborted.sequence], controller.signal);
    engine.submit(undefined, [failing.sequence, healthy.sequence]);
    expect(await aborted.done).toEqual({ kind: 'abort' });
    expect(await failing.done).toMatchObject({ kind: 'error', error: new Error('listener bug') });
    expect(await healthy.done).toBe('finished');
    expect(healthy.tokens).toEqual(await alone(prompts[4] as number[], 8));
    expect(engine.stats()).toMatchObject({ running: 0, waiting: 0 });
  });

  it('stops a sequence at the context window with "length"', async () => {
    const small = new ServeEngine(new LocalDecodeRuntime(model), 'micro', {
      maxModelLen: 8,
      maxNumSeqs: 4,
      maxPrefillTokens: 64,
    });
    const row = record(prompts[0] as number[], 50);
    small.submit(undefined, [row.sequence]);
    expect(await row.done).toEqual({ kind: 'length' });
    expect(row.tokens).toHaveLength(3); // 5 prompt tokens + 3 = 8
    await small.close();
  });

  it('ends waiting sequences with a 503 on close and frees every tensor', async () => {
    const before = tf.memory().numTensors;
    const other = new ServeEngine(new LocalDecodeRuntime(model), 'micro', {
      maxModelLen: 256,
      maxNumSeqs: 4,
      maxPrefillTokens: 64,
    });
    await other.loadAdapter('x', join(fixtureDir('qwen2'), 'adapter'));
    const rows = [record(prompts[0] as number[], 1000), record(prompts[1] as number[], 1000)];
    other.submit(
      'x',
      rows.map((row) => row.sequence),
    );
    await other.close();
    for (const row of rows) {
      expect(await row.done).toMatchObject({ kind: 'error', error: { code: 'unavailable', status: 503 } });
    }
    expect(() => other.submit(undefined, [])).toThrow(/shutting down/);
    await expect(other.loadAdapter('y', '/nowhere')).rejects.toThrow(/shutting down/);
    // The adapter "x" still belongs to the model (close leaves the model to its owner); free it.
    for (const entry of other.registry.list()) model.removeAdapter(entry.key);
    expect(tf.memory().numTensors).toBe(before);
  });
});
