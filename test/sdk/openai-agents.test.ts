// The OpenAI Agents SDK with its own model provider (the Responses API by default), given only the
// trajectory's baseURL: an Agent with a tool, run streamed and not. A random tiny model calls the tool
// only when forced (`toolChoice: 'required'`, kept after a tool use); the run ends after its second
// tool use, so each run is two model calls with the tool's result between, recorded as one trajectory.
import {
  Agent,
  type FunctionToolResult,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
  type ToolToFinalOutputFunction,
  tool,
} from '@openai/agents';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { servedModelName, useEdgeOverServeModel } from './support/edge-over-serve-model.ts';

beforeAll(() => {
  setTracingDisabled(true);
});
const stack = useEdgeOverServeModel();

/** The paths the SDK called under the trajectory URL: the Responses API's, and no other. */
const called: string[] = [];
const realFetch = globalThis.fetch;
beforeAll(() => {
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.includes('/t/')) called.push(new URL(url).pathname.replace(/^\/t\/[^/]+/, ''));
    return realFetch(input, init);
  });
});
afterEach(() => {
  expect(new Set(called)).toEqual(new Set(['/v1/responses']));
  called.length = 0;
});
afterAll(() => {
  vi.restoreAllMocks();
});

const weather = tool({
  name: 'weather',
  description: 'The weather in a city',
  // An enum keeps a random model's guided arguments short.
  parameters: z.object({ city: z.enum(['Oslo', 'Bergen']) }),
  execute: async ({ city }) => `rain in ${city}`,
});

const outputOf = (result: FunctionToolResult | undefined) =>
  result?.type === 'function_output' ? String(result.output) : '';

function agentRun(baseURL: string) {
  let toolUses = 0;
  // Ends the run at the second tool use, its result the final output (the model would not stop on its own).
  const stopAtSecond: ToolToFinalOutputFunction = (_context, results) => {
    toolUses += 1;
    return toolUses < 2
      ? { isFinalOutput: false, isInterrupted: undefined }
      : { isFinalOutput: true, isInterrupted: undefined, finalOutput: outputOf(results[0]) };
  };
  const agent = new Agent({
    name: 'forecaster',
    instructions: 'Use the tool.',
    model: servedModelName,
    tools: [weather],
    toolUseBehavior: stopAtSecond,
    resetToolChoice: false,
    modelSettings: { toolChoice: 'required', parallelToolCalls: false, maxTokens: 200 },
  });
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ baseURL, apiKey: 'unused' }),
    tracingDisabled: true,
  });
  return { agent, runner };
}

async function expectRecorded(trajectoryId: string) {
  const turns = await stack.turns(trajectoryId);
  expect(turns.map((turn) => turn.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
  const [first, second] = turns.filter((turn) => turn.role === 'assistant');
  for (const turn of [first, second]) {
    expect(turn?.completionTokenIds?.length).toBeGreaterThan(0);
    expect(turn?.toolCalls?.[0]?.function.name).toBe('weather');
  }
  const call = first?.toolCalls?.[0];
  expect(turns[3]?.toolCallId).toBe(call?.id);
  expect(turns[3]?.content).toBe(`rain in ${JSON.parse(call?.function.arguments ?? '{}').city}`);
}

describe('@openai/agents through the trajectory URL', () => {
  it('records a run', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const { agent, runner } = agentRun(baseURL);
    const result = await runner.run(agent, 'What is the weather in Oslo?');
    expect(result.finalOutput).toMatch(/^rain in (Oslo|Bergen)$/);
    await expectRecorded(id);
  });

  it('records a streamed run', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const { agent, runner } = agentRun(baseURL);
    const result = await runner.run(agent, 'What is the weather in Oslo?', { stream: true });
    await result.completed;
    expect(result.error ?? null).toBeNull();
    expect(result.finalOutput).toMatch(/^rain in (Oslo|Bergen)$/);
    await expectRecorded(id);
  });
});
