import { describe, expect, it } from 'vitest';
import { ChatStreamAccumulator } from './stream-accumulator.ts';

describe('ChatStreamAccumulator', () => {
  it('rebuilds text, ids, logprobs, usage and the finish reason from vLLM-style chunks', () => {
    const stream = new ChatStreamAccumulator();
    stream.add({
      model: 'agent@1',
      prompt_token_ids: [1, 2],
      choices: [{ index: 0, delta: { role: 'assistant', content: '' } }],
    });
    stream.add({
      choices: [
        {
          index: 0,
          delta: { content: 'He' },
          token_ids: [72, 101],
          logprobs: { content: [{ logprob: -1 }, { logprob: -2 }] },
        },
      ],
    });
    stream.add({
      choices: [
        { index: 0, delta: { content: 'y' }, token_ids: [121], logprobs: { content: [{ logprob: -3 }] } },
      ],
    });
    stream.add({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    stream.add({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 3 } });
    expect(stream.completion()).toEqual({
      object: 'chat.completion',
      model: 'agent@1',
      prompt_token_ids: [1, 2],
      usage: { prompt_tokens: 2, completion_tokens: 3 },
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hey' },
          finish_reason: 'stop',
          logprobs: { content: [{ logprob: -1 }, { logprob: -2 }, { logprob: -3 }] },
          token_ids: [72, 101, 121],
        },
      ],
    });
  });

  it('assembles tool calls streamed in pieces, by index', () => {
    const stream = new ChatStreamAccumulator();
    stream.add({
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 0, id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"ke' } },
            ],
          },
        },
      ],
    });
    stream.add({
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 1, id: 'c2', function: { name: 'f', arguments: '{}' } }] },
        },
      ],
    });
    stream.add({
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: 'y":"ab"}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
    });
    // Another choice's deltas are ignored: the proxy records choice 0.
    stream.add({ choices: [{ index: 1, delta: { content: 'other' } }] });
    const choice = (stream.completion().choices as Record<string, unknown>[])[0];
    expect(choice).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"key":"ab"}' } },
          { id: 'c2', type: 'function', function: { name: 'f', arguments: '{}' } },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
  });
});
