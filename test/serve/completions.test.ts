// POST /v1/completions as vLLM accepts it: a prompt string, a list of token ids, or a list of either;
// the same sampling options as chat (checked against generate()), legacy logprobs, stop token ids,
// streaming with per-choice prompt ids on the first chunk.
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelName, startTestServer, type TestServer, withExtras } from './test-server.ts';
import { generate } from '../support/generate.ts';

interface VllmChoice {
  index: number;
  text: string;
  finish_reason: string | null;
  stop_reason?: number | string | null;
  token_ids?: number[] | null;
  prompt_token_ids?: number[] | null;
  logprobs?: {
    tokens: string[];
    token_logprobs: number[];
    top_logprobs: Record<string, number>[];
    text_offset: number[];
  } | null;
}
type Completion = Omit<OpenAI.Completions.Completion, 'choices'> & { choices: VllmChoice[] };

describe('POST /v1/completions', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  const complete = (body: Record<string, unknown>) =>
    server.client.completions.create(
      withExtras({ model: modelName, prompt: 'x', return_token_ids: true, ...body }),
    ) as unknown as Promise<Completion>;

  it('takes a string, token ids, or a list of them; n choices per prompt, prompt-major', async () => {
    const text = 'The value of a is';
    const ids = [1, 2, 3, 4];
    const response = await complete({ prompt: [text, ids], n: 2, seed: 11, max_tokens: 5, ignore_eos: true });
    expect(response.object).toBe('text_completion');
    expect(response.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    const encoded = server.tokenizer.encode(text);
    expect(response.choices.map((c) => c.prompt_token_ids)).toEqual([encoded, encoded, ids, ids]);
    for (const choice of response.choices) {
      const prompt = choice.prompt_token_ids ?? [];
      const [expected] = await generate(server.reference, [prompt], {
        seed: 11 + (choice.index % 2),
        maxTokens: 5,
        stopTokenIds: [],
      });
      expect(choice.token_ids).toEqual(expected?.tokenIds);
      expect(choice.text).toBe(
        server.tokenizer.decode(expected?.tokenIds ?? [], { skipSpecialTokens: true }),
      );
    }
    expect(response.usage).toEqual({
      prompt_tokens: encoded.length + ids.length,
      completion_tokens: 20,
      total_tokens: encoded.length + ids.length + 20,
    });
    const single = await complete({ prompt: ids, max_tokens: 2 });
    expect(single.choices).toHaveLength(1);
    expect(single.choices[0]?.token_ids).toHaveLength(2);
  });

  it('defaults max_tokens to 16 and stops on stop_token_ids, keeping the id', async () => {
    const free = await complete({ prompt: [5, 6, 7], temperature: 0, ignore_eos: true });
    expect(free.choices[0]?.token_ids).toHaveLength(16);
    const ids = free.choices[0]?.token_ids ?? [];
    const stopId = ids[3] as number;
    const firstAt = ids.indexOf(stopId);
    const stopped = await complete({
      prompt: [5, 6, 7],
      temperature: 0,
      ignore_eos: true,
      stop_token_ids: [stopId],
    });
    expect(stopped.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: stopId });
    expect(stopped.choices[0]?.token_ids).toEqual(ids.slice(0, firstAt + 1));
    expect(stopped.choices[0]?.text).toBe(
      server.tokenizer.decode(ids.slice(0, firstAt), { skipSpecialTokens: true }),
    );
  });

  it('returns legacy logprobs with the sampled token among the top ones', async () => {
    const body = { prompt: [9, 10, 11], logprobs: 2, seed: 2, max_tokens: 4 };
    const named = await complete(body);
    // Token texts can collide as keys (several byte tokens print as U+FFFD), so the top-logprob
    // dictionaries are checked with vLLM's `token_id:<id>` names.
    const response = await complete({ ...body, return_tokens_as_token_ids: true });
    const choice = response.choices[0];
    const ids = choice?.token_ids ?? [];
    const logprobs = choice?.logprobs;
    const expected = await server.reference.logprobs([[9, 10, 11, ...ids]]);
    expect(named.choices[0]?.token_ids).toEqual(ids);
    expect(named.choices[0]?.logprobs?.tokens).toEqual(ids.map((id) => server.tokenizer.decodeToken(id)));
    expect(logprobs?.tokens).toEqual(ids.map((id) => `token_id:${id}`));
    logprobs?.token_logprobs.forEach((value, j) => {
      expect(Math.abs(value - (expected[0]?.[2 + j] as number))).toBeLessThan(1e-4);
      const top = logprobs.top_logprobs[j] ?? {};
      expect(top[logprobs.tokens[j] as string]).toBe(value);
      expect(Object.keys(top).length).toBeGreaterThanOrEqual(2);
      expect(Object.keys(top).length).toBeLessThanOrEqual(3);
    });
    // Offsets are where each token's text starts in the choice's text.
    let offset = 0;
    ids.forEach((id, j) => {
      expect(logprobs?.text_offset[j]).toBe(offset);
      offset += server.tokenizer.decodeToken(id).length;
    });
  });

  it('streams text and token ids that add up to the unstreamed choice', async () => {
    const body = { prompt: [3, 1, 4, 1, 5], n: 2, seed: 8, max_tokens: 6 };
    const whole = await complete(body);
    const stream = (await server.client.completions.create(
      withExtras({ model: modelName, return_token_ids: true, stream: true, ...body }),
    )) as unknown as AsyncIterable<Completion>;
    const chunks: VllmChoice[] = [];
    for await (const chunk of stream) chunks.push(...chunk.choices);
    for (const choice of whole.choices) {
      const mine = chunks.filter((c) => c.index === choice.index);
      expect(mine[0]?.prompt_token_ids).toEqual([3, 1, 4, 1, 5]);
      expect(mine.filter((c) => c.prompt_token_ids)).toHaveLength(1);
      expect(mine.map((c) => c.text).join('')).toBe(choice.text);
      expect(mine.flatMap((c) => c.token_ids ?? [])).toEqual(choice.token_ids);
      expect(mine.at(-1)?.finish_reason).toBe(choice.finish_reason);
    }
  });
});
