import { describe, expect, it } from 'vitest';
import type { ResponseContext } from './response-envelope.ts';
import { toResponseObject } from './to-response-object.ts';

const context: ResponseContext = {
  id: 'resp_abc',
  createdAt: 1_700_000_000,
  request: { model: 'tiny', input: 'Hi.', max_output_tokens: 5 },
};
const logprob = { token: 'Hi', logprob: -0.5, bytes: [72, 105], top_logprobs: [] };

describe('toResponseObject', () => {
  it('makes the text a message item and each tool call a function_call item, with usage renamed', () => {
    const response = toResponseObject(
      {
        model: 'tiny',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Hi',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
            },
            logprobs: { content: [logprob] },
            finish_reason: 'tool_calls',
            token_ids: [5, 6],
          },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
        prompt_token_ids: [1, 2, 3],
      },
      context,
    );
    expect(response).toMatchObject({
      id: 'resp_abc',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      incomplete_details: null,
      model: 'tiny',
      max_output_tokens: 5,
      output: [
        {
          type: 'message',
          id: 'msg_abc_0',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hi', annotations: [], logprobs: [logprob] }],
        },
        {
          type: 'function_call',
          id: 'fc_abc_0',
          call_id: 'call_1',
          name: 'f',
          arguments: '{"a":1}',
          status: 'completed',
        },
      ],
      // 3 + 2 = 5
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
      prompt_token_ids: [1, 2, 3],
      token_ids: [5, 6],
    });
  });

  it('leaves out an empty text beside tool calls, and reports a length finish as incomplete', () => {
    const response = toResponseObject(
      {
        choices: [
          {
            message: { content: '', tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{' } }] },
            finish_reason: 'length',
          },
        ],
      },
      context,
    );
    expect(response.output).toEqual([
      { type: 'function_call', id: 'fc_abc_0', call_id: 'c', name: 'f', arguments: '{', status: 'completed' },
    ]);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.usage).toBeNull();
    expect(response).not.toHaveProperty('token_ids');
  });

  it('answers an empty reply with an empty message', () => {
    const response = toResponseObject(
      { choices: [{ message: { content: '' }, finish_reason: 'stop' }] },
      context,
    );
    expect(response.output).toEqual([
      {
        type: 'message',
        id: 'msg_abc_0',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: '', annotations: [] }],
      },
    ]);
  });
});
