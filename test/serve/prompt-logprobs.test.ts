// vLLM's `prompt_logprobs` on POST /v1/completions, what fleet verification asks every replica for
// (trainer/train/verify-adapter.ts): the scores of a prompt's own tokens equal the logprobs the server
// reported when it sampled those tokens, and the reference model's; an unloaded adapter leaves
// /v1/models and frees its tensors; the base-under-adapter-name fault hook answers with the base
// model's scores under the adapter's name.
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PromptLogprobs } from '../../serve/prompt-logprobs.ts';
import { errorOf, startTestServer, type TestServer, writeAdapter } from './test-server.ts';

interface CompletionWithPromptLogprobs {
  choices: {
    token_ids?: number[] | null;
    logprobs: { token_logprobs: number[] } | null;
    prompt_logprobs: PromptLogprobs | null;
  }[];
}

const prompt = [11, 42, 7, 99, 5, 63, 21, 8];

function post(server: TestServer, path: string, body: unknown): Promise<Response> {
  return fetch(`${server.serving.url}/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function scores(server: TestServer, model: string, ids: number[], top = 0): Promise<PromptLogprobs> {
  const response = await post(server, 'completions', {
    model,
    prompt: ids,
    max_tokens: 1,
    temperature: 0,
    prompt_logprobs: top,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const body = (await response.json()) as CompletionWithPromptLogprobs;
  return body.choices[0]?.prompt_logprobs as PromptLogprobs;
}

/** The logprob each position gives the prompt's own token (positions 1…T − 1). */
function own(logprobs: PromptLogprobs, ids: readonly number[]): number[] {
  return ids.slice(1).map((id, at) => logprobs[at + 1]?.[String(id)]?.logprob as number);
}

describe('prompt_logprobs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    const path = await writeAdapter(server, 'a', 3);
    expect((await post(server, 'load_lora_adapter', { lora_name: 'a', lora_path: path })).status).toBe(200);
  });
  afterAll(() => server.close());

  it('scores sampled tokens as the server did when it sampled them, and as the reference model does', async () => {
    const sampled = await post(server, 'completions', {
      model: 'a',
      prompt,
      max_tokens: 6,
      temperature: 0,
      logprobs: 0,
      ignore_eos: true,
      return_token_ids: true,
    });
    const choice = ((await sampled.json()) as CompletionWithPromptLogprobs).choices[0];
    const tokens = choice?.token_ids as number[];
    const reported = choice?.logprobs?.token_logprobs as number[];
    expect(tokens).toHaveLength(6);

    const sequence = [...prompt, ...tokens];
    const logprobs = await scores(server, 'a', sequence, 2);
    expect(logprobs).toHaveLength(sequence.length);
    expect(logprobs[0]).toBeNull();
    // The sampled tokens' positions: the cached decode steps vs one uncached pass, both fp32.
    const rescored = own(logprobs, sequence).slice(prompt.length - 1);
    const decodeGap = Math.max(...rescored.map((value, i) => Math.abs(value - (reported[i] as number))));
    expect(decodeGap, `largest difference ${decodeGap}`).toBeLessThan(1e-4);
    // Greedy tokens rank first; every entry holds the token itself and the 2 most likely.
    for (const [i, token] of tokens.entries()) {
      const entry = logprobs[prompt.length + i] as Record<string, { rank: number }>;
      expect(entry[String(token)]?.rank).toBe(1);
      expect(Object.keys(entry).length).toBeLessThanOrEqual(3);
    }
    const [reference] = await server.reference.logprobs([sequence], { adapter: 'a' });
    const referenceGap = Math.max(
      ...own(logprobs, sequence).map((value, i) => Math.abs(value - (reference?.[i] as number))),
    );
    expect(referenceGap, `largest difference ${referenceGap}`).toBeLessThan(1e-4);
    // The adapter changes the scores: the base model's differ.
    const base = own(await scores(server, 'tiny', sequence), sequence);
    expect(
      Math.max(...base.map((value, i) => Math.abs(value - (own(logprobs, sequence)[i] as number)))),
    ).toBeGreaterThan(1e-3);
  });

  it('is refused with a stream, as vLLM refuses it', async () => {
    const response = await post(server, 'completions', {
      model: 'a',
      prompt,
      max_tokens: 1,
      prompt_logprobs: 0,
      stream: true,
    });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).message).toMatch(/stream/);
  });

  it('unload_lora_adapter drops the name from /v1/models and frees its tensors', async () => {
    const path = await writeAdapter(server, 'transient', 9);
    const before = tf.memory().numTensors;
    expect(
      (await post(server, 'load_lora_adapter', { lora_name: 'transient', lora_path: path })).status,
    ).toBe(200);
    expect(tf.memory().numTensors).toBeGreaterThan(before);
    await scores(server, 'transient', prompt);
    const unload = await post(server, 'unload_lora_adapter', { lora_name: 'transient' });
    expect(unload.status).toBe(200);
    const models = await server.client.models.list();
    expect(models.data.map((model) => model.id)).not.toContain('transient');
    expect(tf.memory().numTensors).toBe(before);
    expect((await post(server, 'completions', { model: 'transient', prompt, max_tokens: 1 })).status).toBe(
      404,
    );
  });
});

describe('the base-under-adapter-name fault hook', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ fault: 'base-under-adapter-name' });
    const path = await writeAdapter(server, 'a', 3);
    expect((await post(server, 'load_lora_adapter', { lora_name: 'a', lora_path: path })).status).toBe(200);
  });
  afterAll(() => server.close());

  it("lists the adapter and answers under its name with the base model's scores", async () => {
    const models = await server.client.models.list();
    expect(models.data.map((model) => model.id)).toContain('a');
    expect(own(await scores(server, 'a', prompt), prompt)).toEqual(
      own(await scores(server, 'tiny', prompt), prompt),
    );
    const [adapted] = await server.reference.logprobs([prompt], { adapter: 'a' });
    const [base] = await server.reference.logprobs([prompt]);
    expect(adapted).not.toEqual(base);
  });
});
