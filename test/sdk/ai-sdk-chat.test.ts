// The Vercel AI SDK (`ai`) on the chat-completions path, configured with nothing but a client
// trajectory's baseURL: `@ai-sdk/openai-compatible` and `@ai-sdk/openai`'s `openai.chat(model)`,
// `generateText` and `streamText` with a zod tool, forced calls (`toolChoice: 'required'`: the model is
// random) and `stopWhen: stepCountIs(3)`. Each run records one trajectory whose assistant turns carry
// completion token ids, tool results between them. And a permanent refusal (a rewritten history)
// reaches the caller after one HTTP call: the AI SDK retries a 409 by status, so the proxy answers 400.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, type LanguageModel, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TurnRow } from '../../db/schema/turns.ts';
import { servedModelName, useEdgeOverServeModel } from './support/edge-over-serve-model.ts';

const stack = useEdgeOverServeModel();

/** An enum argument keeps a random model's guided call short and always valid. */
const lookup = tool({
  description: 'Look up the weather in a city.',
  inputSchema: z.object({ city: z.enum(['Paris', 'Oslo']) }),
  execute: async ({ city }) => ({ city, weather: city === 'Paris' ? 'sunny' : 'snow' }),
});

const prompt = 'What is the weather in Paris and in Oslo?';

type Provider = 'openai-compatible' | 'openai.chat';
const models: Record<Provider, (baseURL: string) => LanguageModel> = {
  'openai-compatible': (baseURL) =>
    createOpenAICompatible({ baseURL, name: 'edgerl', apiKey: 'unused' })(servedModelName),
  'openai.chat': (baseURL) => createOpenAI({ baseURL, apiKey: 'unused' }).chat(servedModelName),
};

/** What every recorded run must hold: a user prompt, then ≥ 2 assistant calls with token ids, tool results between. */
function expectToolLoop(turns: readonly TurnRow[]): void {
  const roles = turns.map((turn) => turn.role);
  expect(roles[0]).toBe('user');
  const assistants = turns.filter((turn) => turn.role === 'assistant');
  expect(assistants.length).toBeGreaterThanOrEqual(2);
  for (const turn of assistants) {
    expect(turn.completionTokenIds?.length, JSON.stringify(turn)).toBeGreaterThan(0);
    expect(turn.toolCalls?.[0]?.function.name).toBe('lookup');
  }
  // Each assistant call but the last is answered by a tool turn naming its call id.
  for (const [index, turn] of turns.entries()) {
    if (turn.role !== 'assistant' || index === turns.length - 1) continue;
    const next = turns[index + 1];
    expect(next?.role).toBe('tool');
    expect(next?.toolCallId).toBe(turn.toolCalls?.[0]?.id);
    expect(JSON.parse(next?.content ?? '')).toMatchObject({ weather: expect.any(String) });
  }
}

describe.each(Object.keys(models) as Provider[])('the AI SDK (%s) through the trajectory URL', (provider) => {
  it('generateText runs a forced tool loop of three steps, recorded as one trajectory', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const result = await generateText({
      model: models[provider](baseURL),
      prompt,
      tools: { lookup },
      toolChoice: 'required',
      stopWhen: stepCountIs(3),
      maxOutputTokens: 300,
      seed: 3,
    });
    expect(result.steps).toHaveLength(3);
    for (const step of result.steps) expect(step.toolCalls.length).toBeGreaterThan(0);
    const turns = await stack.turns(id);
    expectToolLoop(turns);
    expect(turns.filter((turn) => turn.role === 'assistant')).toHaveLength(3);
  });

  it('streamText runs the same loop streamed, recorded the same way', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const result = streamText({
      model: models[provider](baseURL),
      prompt,
      tools: { lookup },
      toolChoice: 'required',
      stopWhen: stepCountIs(3),
      maxOutputTokens: 300,
      seed: 3,
    });
    const calls: string[] = [];
    let steps = 0;
    for await (const part of result.fullStream) {
      if (part.type === 'error') throw part.error;
      if (part.type === 'tool-call') calls.push(part.toolName);
      if (part.type === 'finish-step') steps += 1;
    }
    expect(steps).toBe(3);
    // One call a step at least (more when the model makes parallel calls).
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(new Set(calls)).toEqual(new Set(['lookup']));
    const turns = await stack.turns(id);
    expectToolLoop(turns);
    expect(turns.filter((turn) => turn.role === 'assistant')).toHaveLength(3);
  });
});

describe('a permanent refusal through the AI SDK', () => {
  let counter: Server;
  let counted = 0;
  let counterUrl = '';
  beforeAll(async () => {
    // In front of the edge: every HTTP call that reaches it passes here and is counted.
    counter = createServer((request, response) => {
      counted += 1;
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const upstream = await fetch(new URL(request.url ?? '/', stack.edgeUrl), {
          method: request.method ?? 'GET',
          headers: { 'content-type': request.headers['content-type'] ?? 'application/json' },
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        });
        const headers: Record<string, string> = {};
        upstream.headers.forEach((value, name) => {
          if (name !== 'content-length' && name !== 'transfer-encoding') headers[name] = value;
        });
        response.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
    counterUrl = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => counter?.close(resolve));
  });

  it('reaches the caller after exactly one HTTP call, a 400 naming the message (not a retried 409)', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const model = models['openai-compatible'](baseURL.replace(stack.edgeUrl, counterUrl));
    const first = await generateText({ model, prompt: 'Hi.', maxOutputTokens: 6 });
    expect(counted).toBe(1);
    // The history the trajectory holds (the user's "Hi." and the reply), rewritten: a conflict every time.
    const error = await generateText({
      model,
      messages: [
        { role: 'user', content: 'Hello.' },
        { role: 'assistant', content: first.text },
        { role: 'user', content: 'Again.' },
      ],
      maxOutputTokens: 6,
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(counted).toBe(2);
    expect(APICallError.isInstance(error), String(error)).toBe(true);
    const refusal = error as APICallError;
    expect(refusal.statusCode).toBe(400);
    expect(refusal.isRetryable).toBe(false);
    expect(JSON.parse(refusal.responseBody ?? '')).toMatchObject({
      error: { code: 'conflict', field: 'messages.0' },
    });
    expect(refusal.message).toMatch(/messages\.0: .*differs from stored turn 0/);
    expect((await stack.turns(id)).map((turn) => turn.role)).toEqual(['user', 'assistant']);
  });
});
