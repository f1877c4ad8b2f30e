// The Vercel AI SDK's default OpenAI model, `openai(model)`, which calls POST /v1/responses, pointed
// at a client trajectory's baseURL and nothing else: generateText and streamText run a three-step
// tool loop (a random tiny model, so every step is forced to call the tool) and the edge records it
// as one trajectory, assistant turns with their sampled token ids and the tool results between. With
// the SDK's default `store: true`, an earlier reply's text goes back as an `item_reference`, which the
// edge resolves to the turn it recorded.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { TurnRow } from '../../db/schema/turns.ts';
import { servedModelName, useEdgeOverServeModel } from './support/edge-over-serve-model.ts';

const stack = useEdgeOverServeModel();

type Json = Record<string, unknown>;

/** The paths the SDK called under the trajectory URL: the Responses API's, and no other. */
const called: string[] = [];
/** The JSON bodies it posted there, in order. */
const bodies: Json[] = [];
const realFetch = globalThis.fetch;
beforeAll(() => {
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.includes('/t/')) {
      called.push(new URL(url).pathname.replace(/^\/t\/[^/]+/, ''));
      if (typeof init?.body === 'string') bodies.push(JSON.parse(init.body) as Json);
    }
    return realFetch(input, init);
  });
});
afterEach(() => {
  expect(new Set(called)).toEqual(new Set(['/v1/responses']));
  called.length = 0;
  bodies.length = 0;
});
afterAll(() => {
  vi.restoreAllMocks();
});

const executed: string[] = [];
const tools = {
  weather: tool({
    description: 'The weather in a city',
    // An enum keeps a random model's guided arguments short.
    inputSchema: z.object({ city: z.enum(['Oslo', 'Bergen']) }),
    execute: async ({ city }) => {
      executed.push(city);
      return `rain in ${city}`;
    },
  }),
};

function settings(baseURL: string) {
  const openai = createOpenAI({ baseURL, apiKey: 'unused' });
  return {
    model: openai(servedModelName),
    system: 'Use the tool.',
    prompt: 'What is the weather in Oslo?',
    tools,
    toolChoice: 'required' as const,
    stopWhen: stepCountIs(3),
    maxOutputTokens: 200,
    // One call per step: a cut parallel call would end the loop early.
    providerOptions: { openai: { parallelToolCalls: false } },
  };
}

/** Every assistant turn sampled with token ids, and every call answered by a tool turn after it. */
function expectToolLoop(turns: readonly TurnRow[], steps: number) {
  const assistants = turns.filter((turn) => turn.role === 'assistant');
  expect(assistants.length).toBe(steps);
  for (const turn of assistants) expect(turn.completionTokenIds?.length).toBeGreaterThan(0);
  expect(turns.slice(0, 2).map((turn) => turn.role)).toEqual(['system', 'user']);
  const calls = assistants.slice(0, -1).flatMap((turn) => turn.toolCalls ?? []);
  const results = turns.filter((turn) => turn.role === 'tool');
  expect(calls.length).toBeGreaterThan(0);
  expect(results.map((turn) => turn.toolCallId)).toEqual(calls.map((call) => call.id));
  expect(results.map((turn) => turn.content)).toEqual(
    calls.map((call) => `rain in ${JSON.parse(call.function.arguments).city}`),
  );
}

describe('@ai-sdk/openai openai(model) (the Responses API) through the trajectory URL', () => {
  it('records a generateText tool loop', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const result = await generateText(settings(baseURL));
    expect(result.steps.length).toBe(3);
    for (const step of result.steps) expect(step.toolCalls.length).toBe(1);
    expectToolLoop(await stack.turns(id), 3);
  });

  it('records a streamText tool loop', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const result = streamText(settings(baseURL));
    await result.consumeStream();
    const steps = await result.steps;
    expect(steps.length).toBe(3);
    for (const step of steps) expect(step.toolCalls.length).toBe(1);
    expectToolLoop(await stack.turns(id), 3);
  });

  it('sends an earlier reply back as an item_reference (store left at its default) and records one trajectory', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const model = createOpenAI({ baseURL, apiKey: 'unused' })(servedModelName);
    const system = 'Use the tool.';
    const question = { role: 'user' as const, content: 'What is the weather in Oslo?' };
    // A reply with text (streamed), then a conversation that goes on from it into a tool loop.
    const first = streamText({
      model,
      system,
      messages: [question],
      tools,
      toolChoice: 'none',
      maxOutputTokens: 8,
    });
    const text = await first.text;
    expect(text).not.toBe('');
    const replied = (await first.response).messages;
    const result = await generateText({
      model,
      system,
      messages: [question, ...replied, { role: 'user', content: 'Now use the tool.' }],
      tools,
      toolChoice: 'required',
      stopWhen: stepCountIs(2),
      maxOutputTokens: 200,
      providerOptions: { openai: { parallelToolCalls: false } },
    });
    expect(result.steps.length).toBe(2);

    // The SDK sent the reply as a reference to the message item the edge returned (turn 2), not as text.
    const reference = { type: 'item_reference', id: `msg_${id.replaceAll('-', '')}_2` };
    expect(bodies.length).toBe(3);
    for (const body of bodies.slice(1)) {
      expect(body.store).toBeUndefined();
      expect(body.input).toContainEqual(reference);
      expect(JSON.stringify(body.input)).not.toContain(JSON.stringify(text));
    }
    const turns = await stack.turns(id);
    expect(turns.map((turn) => turn.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(turns[2]?.content).toBe(text);
    expect(turns[5]?.toolCallId).toBe(turns[4]?.toolCalls?.[0]?.id);
  });
});
