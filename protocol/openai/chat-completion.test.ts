import { describe, expect, it } from 'vitest';
import { parseChatCompletion } from './chat-completion.ts';

/** Shaped like vLLM's answer to `logprobs: true, return_token_ids: true` (vLLM >= 0.10.2). */
const vllmReply = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'agent@3',
  prompt_token_ids: [151644, 872, 198],
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Paris', reasoning_content: null, tool_calls: [] },
      logprobs: {
        content: [
          { token: 'Par', logprob: -0.25, bytes: [80, 97, 114], top_logprobs: [] },
          { token: 'is', logprob: -0.5, bytes: [105, 115], top_logprobs: [] },
        ],
      },
      finish_reason: 'stop',
      stop_reason: null,
      token_ids: [12366, 285],
    },
  ],
  usage: { prompt_tokens: 3, total_tokens: 5, completion_tokens: 2, prompt_tokens_details: null },
};

/** Shaped like OpenAI's answer with a tool call: no token ids, a refusal field, usage details. */
const openaiReply = {
  id: 'chatcmpl-2',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini-2024-07-18',
  system_fingerprint: 'fp_0',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"k":1}' } }],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    },
  ],
  usage: {
    prompt_tokens: 40,
    completion_tokens: 9,
    total_tokens: 49,
    completion_tokens_details: { reasoning_tokens: 0 },
  },
};

describe('parseChatCompletion', () => {
  it("reads vLLM's token ids and logprobs beside the message", () => {
    const parsed = parseChatCompletion(vllmReply);
    if (!parsed.ok) throw new Error(parsed.message);
    expect(parsed.completion.model).toBe('agent@3');
    expect(parsed.completion.prompt_token_ids).toEqual([151644, 872, 198]);
    expect(parsed.completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2 });
    expect(parsed.choice.token_ids).toEqual([12366, 285]);
    expect(parsed.choice.logprobs?.content?.map((entry) => entry.logprob)).toEqual([-0.25, -0.5]);
    expect(parsed.choice.message.content).toBe('Paris');
    expect(parsed.choice.finish_reason).toBe('stop');
  });

  it("reads OpenAI's reply, which has none of vLLM's fields", () => {
    const parsed = parseChatCompletion(openaiReply);
    if (!parsed.ok) throw new Error(parsed.message);
    expect(parsed.completion.prompt_token_ids).toBeUndefined();
    expect(parsed.choice.token_ids).toBeUndefined();
    expect(parsed.choice.logprobs).toBeNull();
    expect(parsed.choice.message).toEqual({
      content: null,
      refusal: null,
      tool_calls: [{ id: 'call_1', function: { name: 'lookup', arguments: '{"k":1}' } }],
    });
    expect(parsed.completion.usage).toEqual({ prompt_tokens: 40, completion_tokens: 9 });
  });

  it('reads the first choice of several, and a refusal', () => {
    const parsed = parseChatCompletion({
      choices: [
        { message: { content: null, refusal: 'I cannot help with that.' }, finish_reason: 'stop' },
        { message: { content: 'second' } },
      ],
    });
    expect(parsed.ok && parsed.choice.message.refusal).toBe('I cannot help with that.');
  });

  it('refuses a body without a first choice, saying so', () => {
    for (const body of [
      'nope',
      null,
      [],
      {},
      { choices: [] },
      { choices: [{}] },
      { choices: [{ message: 'hi' }] },
    ]) {
      const parsed = parseChatCompletion(body);
      expect(parsed.ok, JSON.stringify(body)).toBe(false);
      if (parsed.ok) continue;
      expect(parsed.noChoice, JSON.stringify(body)).toBe(true);
      expect(parsed.message).toMatch(/^unexpected chat completion shape: /);
    }
    const missing = parseChatCompletion({ choices: [{}] });
    expect(!missing.ok && missing.message).toMatch(/choices\.0\.message: /);
  });

  it('refuses malformed fields, naming each one', () => {
    const cases: [unknown, RegExp][] = [
      [{ choices: [{ message: { content: 5 } }] }, /choices\.0\.message\.content: .*string/],
      [{ ...vllmReply, prompt_token_ids: [1, -2] }, /prompt_token_ids\.1: /],
      [{ choices: [{ ...vllmReply.choices[0], token_ids: [1.5] }] }, /choices\.0\.token_ids\.0: .*int/],
      [
        { choices: [{ message: {}, logprobs: { content: [{ logprob: 'x' }] } }] },
        /logprobs\.content\.0\.logprob: /,
      ],
      [{ choices: [{ message: {} }], usage: { prompt_tokens: -1 } }, /usage\.prompt_tokens: /],
      [
        { choices: [{ message: { tool_calls: [{ function: { name: 3 } }] } }] },
        /tool_calls\.0\.function\.name: /,
      ],
    ];
    for (const [body, message] of cases) {
      const parsed = parseChatCompletion(body);
      expect(parsed.ok, JSON.stringify(body)).toBe(false);
      if (parsed.ok) continue;
      expect(parsed.noChoice, JSON.stringify(body)).toBe(false);
      expect(parsed.message).toMatch(message);
    }
  });
});
