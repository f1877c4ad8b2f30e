import { describe, expect, it } from 'vitest';
import { type ResponsesRequest, responsesRequestSchema } from './responses-request.ts';
import { toChatRequest } from './to-chat-request.ts';

const parse = (body: unknown): ResponsesRequest => responsesRequestSchema.parse(body);

describe('toChatRequest', () => {
  it('turns instructions, items, tools and settings into the chat request', () => {
    const translated = toChatRequest(
      parse({
        model: 'tiny',
        instructions: 'Be brief.',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'Weather in ' },
              { type: 'input_text', text: 'Oslo?' },
            ],
          },
          { type: 'reasoning', id: 'rs_1', summary: [] },
          {
            type: 'message',
            role: 'assistant',
            id: 'msg_1',
            status: 'completed',
            content: [{ type: 'output_text', text: 'Looking.', annotations: [] }],
          },
          {
            type: 'function_call',
            id: 'fc_1',
            call_id: 'call_a',
            name: 'weather',
            arguments: '{"city":"Oslo"}',
          },
          {
            type: 'function_call',
            id: 'fc_2',
            call_id: 'call_b',
            name: 'weather',
            arguments: '{"city":"Bergen"}',
          },
          { type: 'function_call_output', call_id: 'call_a', output: 'rain' },
          { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'sun' }] },
        ],
        tools: [
          {
            type: 'function',
            name: 'weather',
            description: 'Weather now',
            parameters: { type: 'object' },
            strict: true,
          },
        ],
        tool_choice: { type: 'function', name: 'weather' },
        parallel_tool_calls: false,
        text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
        max_output_tokens: 64,
        temperature: 0.5,
        top_p: 0.9,
        seed: 7,
        stream: true,
        store: true,
        metadata: { run: '1' },
        truncation: 'disabled',
        include: ['message.output_text.logprobs'],
      }),
    );
    expect(translated).toEqual({
      ok: true,
      sources: ['instructions', 'input.0', 'input.2', 'input.5', 'input.6'],
      body: {
        model: 'tiny',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Oslo?' },
          {
            role: 'assistant',
            content: 'Looking.',
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
              {
                id: 'call_b',
                type: 'function',
                function: { name: 'weather', arguments: '{"city":"Bergen"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_a', content: 'rain' },
          { role: 'tool', tool_call_id: 'call_b', content: 'sun' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'weather',
              description: 'Weather now',
              parameters: { type: 'object' },
              strict: true,
            },
          },
        ],
        tool_choice: { type: 'function', function: { name: 'weather' } },
        parallel_tool_calls: false,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
        },
        max_tokens: 64,
        temperature: 0.5,
        top_p: 0.9,
        seed: 7,
        logprobs: true,
        top_logprobs: 0,
        stream: true,
        stream_options: { include_usage: true },
      },
    });
  });

  it('takes a string input as one user message and a function call without text as content null', () => {
    expect(toChatRequest(parse({ model: 'm', input: 'Hi.' }))).toEqual({
      ok: true,
      sources: ['input'],
      body: { model: 'm', messages: [{ role: 'user', content: 'Hi.' }] },
    });
    const calls = toChatRequest(
      parse({
        input: [
          { role: 'user', content: 'Hi.' },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        ],
        text: { format: { type: 'json_object' } },
      }),
    );
    expect(calls.ok && calls.body).toEqual({
      messages: [
        { role: 'user', content: 'Hi.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
      ],
      response_format: { type: 'json_object' },
    });
  });

  it.each([
    [{ previous_response_id: 'resp_1' }, 'previous_response_id', /send the whole conversation/],
    [{ conversation: 'conv_1' }, 'conversation', /no conversations/],
    [{ background: true }, 'background', /not supported/],
    [{ tools: [{ type: 'web_search' }] }, 'tools.0.type', /only function tools/],
    [{ tool_choice: { type: 'web_search' } }, 'tool_choice', /"auto", "none", "required"/],
    [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input.0.type', /store: false/],
    // The type of an item reference is optional: an item with only an id is one.
    [{ input: [{ id: 'msg_1' }] }, 'input.0.type', /item_reference has nothing to point to/],
    [{ input: [{ type: 'computer_call_output' }] }, 'input.0.type', /not an input item edgerl records/],
    [
      { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x' }] }] },
      'input.0.content.0',
      /only input_text and output_text/,
    ],
    [{ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input.0.call_id', /./],
  ])('refuses %j on %s', (fields, field, message) => {
    const result = toChatRequest(parse({ model: 'm', input: 'Hi.', ...fields }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.field).toBe(field);
    expect(result.message).toMatch(message);
  });

  it('accepts the harmless fields it ignores', () => {
    const result = toChatRequest(
      parse({
        model: 'm',
        input: 'Hi.',
        store: false,
        background: false,
        previous_response_id: null,
        user: 'u',
        prompt_cache_key: 'k',
        reasoning: { effort: 'low' },
      }),
    );
    expect(result).toEqual({
      ok: true,
      sources: ['input'],
      body: { model: 'm', messages: [{ role: 'user', content: 'Hi.' }] },
    });
  });
});
