import { describe, expect, it } from 'vitest';
import { clientResponse } from './client-response.ts';

const upstream = {
  id: 'x',
  prompt_token_ids: [1, 2],
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: '', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      logprobs: { content: [{ token: 'a', logprob: -1 }] },
      token_ids: [7],
      finish_reason: 'tool_calls',
    },
  ],
};

describe('clientResponse', () => {
  it('removes what only the proxy asked for and fills in the stored tool-call ids', () => {
    const result = clientResponse(upstream, { logprobs: false, tokenIds: false }, ['call_2_1']);
    expect(result).toEqual({
      id: 'x',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_2_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
    });
    // The upstream object is not modified.
    expect(upstream.choices[0]?.token_ids).toEqual([7]);
  });

  it('keeps logprobs and token ids the client asked for', () => {
    const result = clientResponse(upstream, { logprobs: true, tokenIds: true }, [
      'call_2_1',
    ]) as typeof upstream;
    expect(result.prompt_token_ids).toEqual([1, 2]);
    expect(result.choices[0]?.token_ids).toEqual([7]);
    expect(result.choices[0]?.logprobs).toEqual(upstream.choices[0]?.logprobs);
  });
});
