// POST /v1/responses on a real serve-model, through the official `openai` client's Responses API:
// the same sampling as the chat completions path (checked against it with the same seed), function
// calls as function_call items that the next request sends back, events that add up to the final
// response, and the fields edgerl cannot honour refused by name.
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelName, startTestServer, type TestServer } from './test-server.ts';

const tools = [
  {
    type: 'function' as const,
    name: 'lookup',
    description: 'Look up a key',
    // An enum keeps a random model's arguments short: the guided call can only pick one.
    parameters: {
      type: 'object',
      properties: { key: { type: 'string', enum: ['a', 'b'] } },
      required: ['key'],
      additionalProperties: false,
    },
    strict: false,
  },
];

/** The output text of a response (the SDK adds `output_text` to non-streamed responses only). */
const textOf = (response: OpenAI.Responses.Response) =>
  response.output
    .flatMap((item) => (item.type === 'message' ? item.content : []))
    .map((part) => (part.type === 'output_text' ? part.text : ''))
    .join('');

describe('POST /v1/responses', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('samples what chat completions samples for the same conversation and seed', async () => {
    const response = await server.client.responses.create({
      model: modelName,
      instructions: 'Be brief.',
      input: 'Hi.',
      max_output_tokens: 6,
      seed: 3,
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    const chat = await server.client.chat.completions.create({
      model: modelName,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi.' },
      ],
      max_tokens: 6,
      seed: 3,
    } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
    expect(response.object).toBe('response');
    expect(response.output_text).toBe(chat.choices[0]?.message.content);
    expect(response.usage?.input_tokens).toBe(chat.usage?.prompt_tokens);
    expect(response.usage?.output_tokens).toBe(chat.usage?.completion_tokens);
    // Six tokens of a random model: cut by the bound unless it sampled an end of text.
    const cut = chat.choices[0]?.finish_reason === 'length';
    expect(response.status).toBe(cut ? 'incomplete' : 'completed');
    if (cut) expect(response.incomplete_details?.reason).toBe('max_output_tokens');
  });

  it('returns forced calls as function_call items, and takes them back with their outputs', async () => {
    const first = await server.client.responses.create({
      model: modelName,
      input: [{ role: 'user', content: 'What is a?' }],
      tools,
      tool_choice: 'required',
      parallel_tool_calls: false,
      max_output_tokens: 200,
      seed: 1,
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    const calls = first.output.filter((item) => item.type === 'function_call');
    expect(calls).toHaveLength(1);
    const call = calls[0];
    if (call?.type !== 'function_call') throw new Error('expected a function call');
    expect(call.name).toBe('lookup');
    expect(call.call_id).toMatch(/^call_/);
    expect(['a', 'b']).toContain((JSON.parse(call.arguments) as { key: string }).key);
    const second = await server.client.responses.create({
      model: modelName,
      input: [
        { role: 'user', content: 'What is a?' },
        ...first.output.map((item) => item as OpenAI.Responses.ResponseInputItem),
        { type: 'function_call_output', call_id: call.call_id, output: 'a is 1' },
      ],
      tools,
      max_output_tokens: 4,
    });
    expect(second.output.length).toBeGreaterThan(0);
    expect(second.usage?.input_tokens).toBeGreaterThan(first.usage?.input_tokens ?? Infinity);
  });

  it('streams events whose deltas make the final response, which matches the unstreamed one', async () => {
    const body = { model: modelName, input: 'Tell me.', max_output_tokens: 8, seed: 5 };
    const whole = await server.client.responses.create(
      body as OpenAI.Responses.ResponseCreateParamsNonStreaming,
    );
    const stream = await server.client.responses.create({
      ...body,
      stream: true,
    } as OpenAI.Responses.ResponseCreateParamsStreaming);
    const types: string[] = [];
    let deltas = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
      if (event.type === 'response.completed' || event.type === 'response.incomplete') final = event.response;
    }
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types).toContain('response.output_item.done');
    expect(final && textOf(final)).toBe(deltas);
    expect(deltas).toBe(whole.output_text);
    expect(final?.usage).toEqual(whole.usage);
  });

  it('refuses what it cannot honour with a 400 naming the field', async () => {
    const post = (body: unknown) =>
      fetch(`${server.serving.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const stored = await post({ model: modelName, input: 'Hi.', previous_response_id: 'resp_1' });
    expect(stored.status).toBe(400);
    const error = ((await stored.json()) as { error: { message: string; param: string } }).error;
    expect(error.param).toBe('previous_response_id');
    expect(error.message).toMatch(/whole conversation/);
    const builtIn = await post({ model: modelName, input: 'Hi.', tools: [{ type: 'web_search' }] });
    expect(builtIn.status).toBe(400);
    expect(((await builtIn.json()) as { error: { param: string } }).error.param).toBe('tools.0.type');
    const garbage = await post({ model: modelName, input: 42 });
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: { param: string } }).error.param).toBe('input');
  });

  it("names a refused schema keyword or token limit by the Responses body's own fields", async () => {
    const post = async (body: unknown) => {
      const reply = await fetch(`${server.serving.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: modelName, input: 'Hi.', ...(body as object) }),
      });
      return {
        status: reply.status,
        error: ((await reply.json()) as { error: { message: string; param: string } }).error,
      };
    };
    const uri = {
      type: 'object',
      properties: { link: { type: 'string', format: 'uri' } },
      required: ['link'],
    };
    const tool = await post({
      tools: [{ type: 'function', name: 'open', parameters: uri, strict: true }],
      tool_choice: 'required',
    });
    expect(tool.status).toBe(400);
    expect(tool.error.param).toBe('tools.0.parameters');
    expect(tool.error.message).toMatch(
      /^tools\.0\.parameters\.properties\.link\.format: "uri" is not supported/,
    );
    expect(tool.error.message).not.toMatch(/function\.parameters|response_format|max_tokens/);
    const format = await post({ text: { format: { type: 'json_schema', name: 'out', schema: uri } } });
    expect(format.status).toBe(400);
    expect(format.error.message).toMatch(/^text\.format\.schema\.properties\.link\.format: "uri"/);
    const tokens = await post({ max_output_tokens: 1_000_000 });
    expect(tokens.status).toBe(400);
    expect(tokens.error.param).toBe('max_output_tokens');
    expect(tokens.error.message).not.toMatch(/max_tokens/);
  });
});
