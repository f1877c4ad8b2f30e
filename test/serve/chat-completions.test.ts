// POST /v1/chat/completions through the official openai client, checked against independent paths:
// prompts against the tokenizer's own chat render, sampled tokens against test/support/generate.ts
// (greedy and seeded: same sampler stream, without the server's engine), logprobs against an
// uncached forward pass over prompt + completion, and streams against the same request unstreamed.
import * as tf from '@tensorflow/tfjs';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../protocol/chat.ts';
import { modelName, startTestServer, type TestServer, type VllmChat, withExtras } from './test-server.ts';
import { generate } from '../support/generate.ts';

type Chat = VllmChat;
type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk & {
  prompt_token_ids?: number[];
  choices: { token_ids?: number[] }[];
};

const question: ChatMessage[] = [{ role: 'user', content: 'What is the value of a?' }];

describe('POST /v1/chat/completions', () => {
  let server: TestServer;
  let promptIds: number[];
  beforeAll(async () => {
    server = await startTestServer();
    promptIds = server.tokenizer.encodeChat(question, { addGenerationPrompt: true });
  });
  afterAll(() => server.close());

  const chat = (body: Record<string, unknown>) =>
    server.client.chat.completions.create(
      withExtras({ model: modelName, messages: question, return_token_ids: true, ...body }),
    ) as Promise<Chat>;

  it('answers a plain chat greedily with the tokens generate() picks, and returns prompt and output ids', async () => {
    const response = await chat({ temperature: 0, max_tokens: 6 });
    const [expected] = await generate(server.reference, [promptIds], { temperature: 0, maxTokens: 6 });
    const choice = response.choices[0];
    expect(response.object).toBe('chat.completion');
    expect(response.model).toBe(modelName);
    expect(response.prompt_token_ids).toEqual(promptIds);
    expect(choice?.token_ids).toEqual(expected?.tokenIds);
    expect(choice?.finish_reason).toBe(expected?.finishReason);
    const textIds = (expected?.tokenIds ?? []).filter((id) => !server.tokenizer.eosTokenIds.includes(id));
    expect(choice?.message).toEqual({
      role: 'assistant',
      content: server.tokenizer.decode(textIds, { skipSpecialTokens: true }),
    });
    expect(response.usage).toEqual({
      prompt_tokens: promptIds.length,
      completion_tokens: expected?.tokenIds.length,
      total_tokens: promptIds.length + (expected?.tokenIds.length ?? 0),
    });
  });

  it('samples with a seed exactly as the runtime sampler does, reproducibly', async () => {
    const body = { temperature: 0.8, top_p: 0.9, seed: 42, max_tokens: 12, ignore_eos: true };
    const first = await chat(body);
    const second = await chat(body);
    const [expected] = await generate(server.reference, [promptIds], {
      temperature: 0.8,
      topP: 0.9,
      seed: 42,
      maxTokens: 12,
      stopTokenIds: [],
    });
    expect(first.choices[0]?.token_ids).toEqual(expected?.tokenIds);
    expect(second.choices[0]?.token_ids).toEqual(first.choices[0]?.token_ids);
    expect(first.choices[0]?.finish_reason).toBe('length');
  });

  it('returns n choices, choice i sampled with seed + i', async () => {
    const response = await chat({ n: 3, seed: 5, max_tokens: 8, ignore_eos: true });
    expect(response.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    for (const [i, choice] of response.choices.entries()) {
      const [expected] = await generate(server.reference, [promptIds], {
        seed: 5 + i,
        maxTokens: 8,
        stopTokenIds: [],
      });
      expect(choice.token_ids).toEqual(expected?.tokenIds);
    }
    const distinct = new Set(response.choices.map((c) => JSON.stringify(c.token_ids)));
    expect(distinct.size).toBe(3);
    expect(response.usage?.completion_tokens).toBe(24);
  });

  it('returns raw logprobs and top logprobs that match an uncached forward pass within 1e-4', async () => {
    const response = await chat({
      logprobs: true,
      top_logprobs: 3,
      seed: 9,
      temperature: 1.3,
      max_tokens: 6,
    });
    const choice = response.choices[0];
    const ids = choice?.token_ids ?? [];
    const content = choice?.logprobs?.content ?? [];
    expect(content).toHaveLength(ids.length);
    const full = [...promptIds, ...ids];
    const logits = server.reference.forwardLogits([full]);
    const logSoftmax = tf.logSoftmax(logits);
    const table = (await logSoftmax.array()) as number[][][];
    tf.dispose([logits, logSoftmax]);
    let worst = 0;
    for (const [j, entry] of content.entries()) {
      const row = table[0]?.[promptIds.length - 1 + j] as number[]; // predicts token j
      const id = ids[j] as number;
      expect(entry.token).toBe(server.tokenizer.decodeToken(id));
      expect(entry.bytes).toEqual(Array.from(server.tokenizer.tokenBytes(id)));
      worst = Math.max(worst, Math.abs(entry.logprob - (row[id] as number)));
      const top3 = row
        .map((value, tokenId) => ({ value, tokenId }))
        .sort((a, b) => b.value - a.value || a.tokenId - b.tokenId)
        .slice(0, 3);
      expect(entry.top_logprobs.map((t) => t.token)).toEqual(
        top3.map((t) => server.tokenizer.decodeToken(t.tokenId)),
      );
      for (const [k, top] of entry.top_logprobs.entries())
        worst = Math.max(worst, Math.abs(top.logprob - (top3[k]?.value as number)));
    }
    expect(worst).toBeLessThan(1e-4);
    const asIds = await chat({
      logprobs: true,
      seed: 9,
      temperature: 1.3,
      max_tokens: 6,
      return_tokens_as_token_ids: true,
    });
    expect(asIds.choices[0]?.logprobs?.content?.map((entry) => entry.token)).toEqual(
      ids.map((id) => `token_id:${id}`),
    );
  });

  it('streams the same choices as the unstreamed response, with ids as deltas and usage last', async () => {
    const body = { n: 2, seed: 3, max_tokens: 10, logprobs: true };
    const whole = await chat(body);
    const stream = (await server.client.chat.completions.create(
      withExtras({
        model: modelName,
        messages: question,
        return_token_ids: true,
        stream: true,
        stream_options: { include_usage: true },
        ...body,
      }),
    )) as unknown as AsyncIterable<Chunk>;
    const chunks: Chunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.prompt_token_ids).toEqual(promptIds);
    expect(chunks.filter((c) => c.prompt_token_ids !== undefined)).toHaveLength(1);
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage).toEqual(whole.usage);
    for (const index of [0, 1]) {
      const mine = chunks.flatMap((c) => c.choices.filter((choice) => choice.index === index));
      expect(mine[0]?.delta.role).toBe('assistant');
      expect(mine.map((c) => c.delta.content ?? '').join('')).toBe(whole.choices[index]?.message.content);
      expect(mine.flatMap((c) => (c as { token_ids?: number[] }).token_ids ?? [])).toEqual(
        whole.choices[index]?.token_ids,
      );
      expect(mine.flatMap((c) => c.logprobs?.content ?? [])).toEqual(whole.choices[index]?.logprobs?.content);
      expect(mine.filter((c) => c.finish_reason !== null).map((c) => c.finish_reason)).toEqual([
        whole.choices[index]?.finish_reason,
      ]);
    }
  });

  it('cuts the text at a stop string and reports it, also when streaming', async () => {
    // Guided choice makes the text deterministic: the model may only spell this string.
    const forced = { structured_outputs: { choice: ['alpha beta gamma'] }, seed: 1, max_tokens: 40 };
    const plain = await chat(forced);
    expect(plain.choices[0]?.message.content).toBe('alpha beta gamma');
    expect(plain.choices[0]?.finish_reason).toBe('stop');
    const stopped = await chat({ ...forced, stop: ['beta', 'zzz'] });
    expect(stopped.choices[0]?.message.content).toBe('alpha ');
    expect(stopped.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: 'beta' });
    const kept = await chat({ ...forced, stop: 'beta', include_stop_str_in_output: true });
    expect(kept.choices[0]?.message.content).toBe('alpha beta');
    const stream = (await server.client.chat.completions.create(
      withExtras({ model: modelName, messages: question, stream: true, stop: ['beta'], ...forced }),
    )) as unknown as AsyncIterable<Chunk>;
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('alpha ');
  });

  it('continues a final assistant message when asked to', async () => {
    const messages: ChatMessage[] = [...question, { role: 'assistant', content: 'The value' }];
    const response = (await server.client.chat.completions.create(
      withExtras({
        model: modelName,
        messages,
        continue_final_message: true,
        add_generation_prompt: false,
        max_tokens: 3,
        return_token_ids: true,
      }),
    )) as Chat;
    // The generation prompt followed by the partial answer, rendered independently of the server's cut.
    const expected = server.tokenizer.encode(
      `${server.tokenizer.applyChatTemplate(question, { addGenerationPrompt: true })}The value`,
    );
    expect(response.prompt_token_ids).toEqual(expected);
  });

  it('leaves no tensors behind in this process once requests are done', async () => {
    await chat({ max_tokens: 2 });
    const before = tf.memory().numTensors;
    await Promise.all([chat({ max_tokens: 4, n: 2 }), chat({ max_tokens: 3, logprobs: true })]);
    expect(tf.memory().numTensors).toBe(before);
  });
});
