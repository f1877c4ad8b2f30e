// LangChain's `ChatOpenAI` (@langchain/openai) on the chat-completions path, configured with nothing but
// a client trajectory's baseURL: `bindTools` with a zod tool forced on every call (`tool_choice:
// "required"`: the model is random), and a manual three-step tool loop with `invoke` and with `stream`.
// Each loop records one trajectory whose assistant turns carry completion token ids, tool results between.
import { type AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { servedModelName, useEdgeOverServeModel } from './support/edge-over-serve-model.ts';

const stack = useEdgeOverServeModel();

/** An enum argument keeps a random model's guided call short and always valid. */
const lookup = tool(
  async ({ city }) => JSON.stringify({ city, weather: city === 'Paris' ? 'sunny' : 'snow' }),
  {
    name: 'lookup',
    description: 'Look up the weather in a city.',
    schema: z.object({ city: z.enum(['Paris', 'Oslo']) }),
  },
);

function model(baseURL: string) {
  const chat = new ChatOpenAI({
    model: servedModelName,
    apiKey: 'unused',
    configuration: { baseURL },
    maxTokens: 300,
    // Sampling stays random, but each call is reproducible given its prompt.
    modelKwargs: { seed: 3 },
  });
  return chat.bindTools([lookup], { tool_choice: 'required' });
}

type Step = (messages: BaseMessage[]) => Promise<AIMessageChunk | BaseMessage>;
const steps: Record<'invoke' | 'stream', (baseURL: string) => Step> = {
  invoke: (baseURL) => (messages) => model(baseURL).invoke(messages),
  stream: (baseURL) => async (messages) => {
    let whole: AIMessageChunk | undefined;
    for await (const chunk of await model(baseURL).stream(messages))
      whole = whole ? whole.concat(chunk) : chunk;
    if (!whole) throw new Error('the stream ended without a chunk');
    return whole;
  },
};

describe.each(['invoke', 'stream'] as const)('ChatOpenAI.%s through the trajectory URL', (how) => {
  it('runs a three-step forced tool loop, recorded as one trajectory with token ids', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const step = steps[how](baseURL);
    const messages: BaseMessage[] = [new HumanMessage('What is the weather in Paris and in Oslo?')];
    for (let round = 0; round < 3; round++) {
      const reply = await step(messages);
      messages.push(reply);
      const calls = 'tool_calls' in reply ? (reply.tool_calls ?? []) : [];
      expect(calls.length, JSON.stringify(reply)).toBeGreaterThan(0);
      if (round === 2) break;
      for (const call of calls) {
        const output = await lookup.invoke(call.args as { city: 'Paris' | 'Oslo' });
        messages.push(new ToolMessage({ content: output, tool_call_id: call.id ?? '' }));
      }
    }
    const turns = await stack.turns(id);
    expect(turns[0]?.role).toBe('user');
    const assistants = turns.filter((turn) => turn.role === 'assistant');
    expect(assistants).toHaveLength(3);
    for (const turn of assistants) {
      expect(turn.completionTokenIds?.length, JSON.stringify(turn)).toBeGreaterThan(0);
      expect(turn.toolCalls?.[0]?.function.name).toBe('lookup');
    }
    // Between assistant calls, the tool results answering each of the call before.
    for (const [index, turn] of turns.entries()) {
      if (turn.role !== 'assistant' || index === turns.length - 1) continue;
      const answers = turns.slice(index + 1, index + 1 + (turn.toolCalls?.length ?? 0));
      expect(answers.map((answer) => answer.role)).toEqual(turn.toolCalls?.map(() => 'tool'));
      expect(answers.map((answer) => answer.toolCallId)).toEqual(turn.toolCalls?.map((call) => call.id));
      expect(JSON.parse(answers[0]?.content ?? '')).toMatchObject({ weather: expect.any(String) });
    }
  });
});
