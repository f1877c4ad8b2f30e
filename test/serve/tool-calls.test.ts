// A tool-calling round trip through the openai client. A random tiny model does not call tools on its
// own, so the test steers it with guided choice (vLLM's `structured_outputs.choice`): the model may
// only spell the given text, one sampled token at a time with its real logprobs, which then goes
// through the same Hermes parsing, finish reason and streaming as any output would. The forced text is
// exactly what the chat template renders for that call, so the next turn's prompt extends the first
// turn's prompt plus the sampled tokens (what lets the trainer reuse stored ids).
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { modelName, startTestServer, type TestServer, type VllmChat, withExtras } from './test-server.ts';

type Chat = VllmChat;

const tools: ToolSpec[] = [
  {
    type: 'function',
    function: {
      name: 'lookup',
      description: 'Look up a key',
      parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
    },
  },
];
const callText = '<tool_call>\n{"name": "lookup", "arguments": {"key": "a"}}\n</tool_call>';
const question: ChatMessage[] = [{ role: 'user', content: 'What is a?' }];

describe('tool calls', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  const ask = (messages: ChatMessage[], choice: string, extra: Record<string, unknown> = {}) =>
    server.client.chat.completions.create(
      withExtras({
        model: modelName,
        messages,
        tools,
        structured_outputs: { choice: [choice] },
        seed: 4,
        max_tokens: 120,
        return_token_ids: true,
        logprobs: true,
        ...extra,
      }),
    ) as Promise<Chat>;

  it('returns a call as OpenAI tool_calls, and the tool result leads to a plain answer', async () => {
    const first = await ask(question, callText);
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    const call = choice?.message.tool_calls?.[0];
    expect(choice?.message.tool_calls).toHaveLength(1);
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('lookup');
    expect(JSON.parse(call.function.arguments)).toEqual({ key: 'a' });
    expect(call.id).toMatch(/^call_/);
    // The sampled ids spell the call and end on an end-of-sequence token (guided choice allows only
    // those once the text is complete); each has a real logprob.
    const ids = choice?.token_ids ?? [];
    expect(server.tokenizer.decode(ids.slice(0, -1))).toBe(callText);
    expect(server.tokenizer.eosTokenIds).toContain(ids.at(-1));
    expect(choice?.logprobs?.content).toHaveLength(ids.length);
    for (const entry of choice?.logprobs?.content ?? []) expect(entry.logprob).toBeLessThan(0);

    const history: ChatMessage[] = [
      ...question,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: call.id, type: 'function', function: call.function }],
      },
      { role: 'tool', tool_call_id: call.id, content: 'value 7' },
    ];
    const second = await ask(history, 'a is 7.');
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message).toEqual({ role: 'assistant', content: 'a is 7.' });
    const before = server.tokenizer.decode([...(first.prompt_token_ids ?? []), ...ids.slice(0, -1)]);
    expect(server.tokenizer.decode(second.prompt_token_ids ?? []).startsWith(before)).toBe(true);
  });

  it('streams a call as one tool_calls delta with finish_reason tool_calls', async () => {
    const stream = (await server.client.chat.completions.create(
      withExtras({
        model: modelName,
        messages: question,
        tools,
        structured_outputs: { choice: [`Let me check.\n${callText}`] },
        seed: 4,
        max_tokens: 120,
        stream: true,
      }),
    )) as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
    let content = '';
    const calls: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    const finishes: (string | null)[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      content += choice.delta.content ?? '';
      calls.push(...(choice.delta.tool_calls ?? []));
      if (choice.finish_reason) finishes.push(choice.finish_reason);
    }
    // The unstreamed content, trimmed as parse-tool-calls.ts trims text outside calls.
    expect(content).toBe('Let me check.');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'lookup' } });
    expect(JSON.parse(calls[0]?.function?.arguments ?? '')).toEqual({ key: 'a' });
    expect(finishes).toEqual(['tool_calls']);
  });

  const streamed = async (extra: Record<string, unknown>) => {
    const stream = (await server.client.chat.completions.create(
      withExtras({ model: modelName, messages: question, tools, seed: 4, ...extra, stream: true }),
    )) as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
    const contents: string[] = [];
    const calls: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    const finishes: string[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.delta.content) contents.push(choice.delta.content);
      calls.push(...(choice.delta.tool_calls ?? []));
      if (choice.finish_reason) finishes.push(choice.finish_reason);
    }
    return { contents, calls, finishes };
  };
  const otherCall = callText.replace('"a"', '"b"');

  it('streams parallel calls with no content between them, as the unstreamed body has none', async () => {
    const choice = { structured_outputs: { choice: [`${callText}\n${otherCall}`] }, max_tokens: 120 };
    const whole = await ask(question, `${callText}\n${otherCall}`);
    expect(whole.choices[0]?.message.content).toBeNull();
    expect(whole.choices[0]?.message.tool_calls).toHaveLength(2);
    const stream = await streamed(choice);
    // The "\n" between the calls used to come as a content delta of its own.
    expect(stream.contents).toEqual([]);
    expect(stream.calls.map((call) => JSON.parse(call.function?.arguments ?? ''))).toEqual([
      { key: 'a' },
      { key: 'b' },
    ]);
    expect(stream.finishes).toEqual(['tool_calls']);
  });

  it('reports a call cut by max_tokens as "length" with its raw text as content, streamed or not', async () => {
    const text = `${callText}\n${otherCall}`;
    const full = await ask(question, text);
    const ids = full.choices[0]?.token_ids ?? [];
    // Cut inside the second call's name: it is open and unparseable.
    let maxTokens = 1;
    const open = `${callText}\n<tool_call>\n{"na`;
    while (!server.tokenizer.decode(ids.slice(0, maxTokens)).startsWith(open)) maxTokens++;
    const cutText = server.tokenizer.decode(ids.slice(0, maxTokens));
    expect(maxTokens).toBeLessThan(ids.length - 1);
    const cut = await ask(question, text, { max_tokens: maxTokens });
    const choice = cut.choices[0];
    expect(choice?.finish_reason).toBe('length');
    expect(choice?.message.tool_calls?.map((call) => call.type === 'function' && call.function.name)).toEqual(
      ['lookup'],
    );
    const rawCut = cutText.slice(callText.length).trim();
    expect(choice?.message.content).toBe(rawCut);
    const stream = await streamed({ structured_outputs: { choice: [text] }, max_tokens: maxTokens });
    expect(stream.finishes).toEqual(['length']);
    expect(stream.calls).toHaveLength(1);
    expect(stream.contents.join('')).toBe(rawCut);
  });

  it('with tool_choice "none" renders no tools and parses no calls', async () => {
    const withTools = await ask(question, callText, { max_tokens: 1 });
    const without = await ask(question, callText, { tool_choice: 'none' });
    expect(without.choices[0]?.finish_reason).toBe('stop');
    expect(without.choices[0]?.message.content).toBe(callText);
    expect(without.choices[0]?.message.tool_calls).toBeUndefined();
    const plainPrompt = server.tokenizer.encodeChat(question, { addGenerationPrompt: true });
    expect(without.prompt_token_ids).toEqual(plainPrompt);
    expect(withTools.prompt_token_ids).toEqual(
      server.tokenizer.encodeChat(question, { tools, addGenerationPrompt: true }),
    );
  });
});
