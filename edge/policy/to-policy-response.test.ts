import { describe, expect, it } from 'vitest';
import { missingToolName, toPolicyResponse } from './to-policy-response.ts';

const context = { model: 'asked', latencyMs: 5 };

describe('toPolicyResponse', () => {
  it('keeps a nameless tool call as an unknown tool and logprobs that do not line up with the ids apart', () => {
    const response = toPolicyResponse(
      {
        choices: [
          {
            message: { content: 'x', tool_calls: [{ function: { name: '', arguments: null } }] },
            token_ids: [1, 2, 3],
            logprobs: { content: [{ logprob: -1 }, { logprob: -2 }] },
            finish_reason: 'length',
          },
        ],
      },
      context,
    );
    expect(response.message.tool_calls).toEqual([
      { id: '', type: 'function', function: { name: missingToolName, arguments: '' } },
    ]);
    expect(response.completionTokenIds).toEqual([1, 2, 3]);
    expect(response.completionLogprobs).toBeUndefined();
    expect(response.untokenizedLogprobs).toEqual([-1, -2]);
    expect(response.finishReason).toBe('length');
    // No `model` in the body: the name asked for stands in.
    expect(response.servedBy).toBe('asked');
  });

  it('names the missing part of a body that is not a chat completion', () => {
    expect(() => toPolicyResponse({ choices: [{}] }, context)).toThrow(/choices\.0\.message/);
    expect(() => toPolicyResponse('nope', context)).toThrow(/unexpected chat completion shape/);
  });
});
