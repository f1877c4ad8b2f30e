// Error answers in OpenAI's JSON shape with vLLM's status codes, seen through the openai client (which
// maps them to its error classes) and raw fetch (the exact body): unknown model 404, malformed
// requests 400 naming the field, prompts past the context window 400 with both numbers, the API key.
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, modelName, startTestServer, type TestServer, withExtras } from './test-server.ts';

const maxModelLen = 64;
const apiKey = 'test-key';
const maxBodyBytes = 4096;

describe('errors', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ maxModelLen, apiKey, maxBodyBytes });
  });
  afterAll(() => server.close());

  const post = (path: string, body: string, key: string | null = apiKey) =>
    fetch(`${server.serving.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body,
    });

  async function apiError(promise: Promise<unknown>): Promise<APIError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (!(error instanceof APIError)) throw new Error(`expected an APIError, got ${String(error)}`);
    return error;
  }

  it('answers an unknown model with 404 in vLLM’s words', async () => {
    const error = await apiError(
      server.client.chat.completions.create({ model: 'gpt-9', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(error.status).toBe(404);
    expect(error.error).toEqual({
      message: 'The model `gpt-9` does not exist.',
      type: 'NotFoundError',
      param: 'model',
      code: 404,
    });
    const completion = await apiError(server.client.completions.create({ model: 'gpt-9', prompt: 'hi' }));
    expect(completion.status).toBe(404);
  });

  it('answers malformed requests with 400 naming the field', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ model: modelName, messages: [] }, 'messages', /^400 messages: must not be empty$/],
      [
        { model: modelName, messages: [{ role: 'user', content: 3 }] },
        'messages.0.content',
        /^400 messages\.0\.content: must be a string or an array, not a number$/,
      ],
      [
        { model: modelName, messages: [{ role: 'robot', content: 'x' }] },
        'messages.0.role',
        /^400 messages\.0\.role: "robot" is not accepted here; send one of "system", "developer", "user", "assistant" or "tool"$/,
      ],
      [
        {
          model: modelName,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in it?' },
                { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
              ],
            },
          ],
        },
        'messages.0.content.1',
        /^400 messages\.0\.content\.1: image parts are not supported by this endpoint; send text parts: \{"type": "text", "text": "…"\}$/,
      ],
      [
        {
          model: modelName,
          messages: [
            { role: 'user', content: 'x' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
            { role: 'tool', content: '4' },
          ],
        },
        'messages.2.tool_call_id',
        /^400 messages\.2\.tool_call_id: is required on a tool message: the id of the assistant tool call it answers$/,
      ],
      [
        { model: modelName, messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json' } },
        'response_format.type',
        /^400 response_format\.type: "json" is not accepted here; send one of "text", "json_object" or "json_schema"$/,
      ],
      [
        { model: modelName, messages: [{ role: 'user', content: 'x' }], temperature: -1 },
        'temperature',
        /temperature/,
      ],
      [
        { model: modelName, messages: [{ role: 'user', content: 'x' }], n: 0 },
        'n',
        /^400 n: must be at least 1; got 0$/,
      ],
      [
        { model: modelName, messages: [{ role: 'user', content: 'x' }], top_logprobs: 2 },
        'top_logprobs',
        /top_logprobs needs logprobs: true/,
      ],
      [
        { model: modelName, messages: [{ role: 'user', content: 'x' }], logprobs: true, top_logprobs: 21 },
        'top_logprobs',
        /at most 20 logprobs/,
      ],
      [
        { model: modelName, messages: [{ role: 'user', content: 'x' }], presence_penalty: 0.5 },
        'presence_penalty',
        /presence_penalty: is not supported/,
      ],
      [
        {
          model: modelName,
          messages: [{ role: 'user', content: 'x' }],
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'x', schema: { type: 'string', pattern: '(?=a)' } },
          },
        },
        'response_format.json_schema.schema',
        /response_format\.json_schema\.schema\.pattern: lookahead and lookbehind are not supported/,
      ],
      [
        { model: modelName, messages: [{ role: 'user', content: 'x' }], tool_choice: 'required' },
        'tool_choice',
        /When using `tool_choice`, `tools` must be set/,
      ],
      [
        { model: modelName, messages: [{ role: 'user', content: 'x' }], structured_outputs: { regex: 'a+' } },
        'structured_outputs',
        /only `choice`, `json` and `json_object` are supported/,
      ],
      [
        { model: modelName, messages: [{ role: 'user', content: 'x' }], logit_bias: { 9999: 5 } },
        'logit_bias',
        /logit_bias: "9999" is not a token id in \[0, 576\)/,
      ],
    ];
    for (const [body, param, message] of cases) {
      const error = await apiError(server.client.chat.completions.create(body as never));
      expect(error.status, JSON.stringify(body)).toBe(400);
      expect(error.error, JSON.stringify(body)).toMatchObject({ type: 'BadRequestError', param, code: 400 });
      expect(error.message).toMatch(message);
    }
    const notJson = await post('/v1/chat/completions', '{"model": ');
    expect(notJson.status).toBe(400);
    expect((await errorOf(notJson)).message).toMatch(/request body is not valid JSON/);
    const badPrompt = await apiError(
      server.client.completions.create({ model: modelName, prompt: [[1, 99999]] }),
    );
    expect(badPrompt.status).toBe(400);
    expect(badPrompt.message).toMatch(/prompt\.1: token id 99999 is outside the vocabulary \[0, 576\)/);
  });

  it('rejects prompts that do not fit the context window, naming both numbers', async () => {
    const long = await apiError(
      server.client.completions.create({ model: modelName, prompt: Array.from({ length: 70 }, () => 65) }),
    );
    expect(long.status).toBe(400);
    expect(long.message).toBe(
      "400 This model's maximum context length is 64 tokens. However, your request has 70 input tokens. Please reduce the length of the input.",
    );
    expect(long.param).toBe('prompt');
    const chat = await apiError(
      server.client.chat.completions.create({
        model: modelName,
        messages: [{ role: 'user', content: 'x'.repeat(200) }],
      }),
    );
    expect(chat.status).toBe(400);
    expect(chat.message).toMatch(
      /maximum context length is 64 tokens\. However, your request has \d+ input tokens/,
    );
    const tooMany = await apiError(
      server.client.completions.create({
        model: modelName,
        prompt: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        max_tokens: 60,
      }),
    );
    expect(tooMany.status).toBe(400);
    expect(tooMany.message).toMatch(
      /'max_tokens' is too large: 60\. .* 64 tokens and your request has 10 input tokens \(60 > 64 - 10\)/,
    );
    // Without max_tokens a chat may use what the window leaves, and stops there.
    const fits = await server.client.chat.completions.create(
      withExtras({ model: modelName, messages: [{ role: 'user', content: 'hi' }], ignore_eos: true }),
    );
    const prompt = server.tokenizer.encodeChat([{ role: 'user', content: 'hi' }], {
      addGenerationPrompt: true,
    });
    expect(fits.usage?.completion_tokens).toBe(maxModelLen - prompt.length);
    expect(fits.choices[0]?.finish_reason).toBe('length');
  });

  it('requires the API key on /v1 routes, not on /health', async () => {
    const missing = await post('/v1/chat/completions', '{}', null);
    expect(missing.status).toBe(401);
    expect(await errorOf(missing)).toMatchObject({ type: 'AuthenticationError', code: 401 });
    expect((await post('/v1/load_lora_adapter', '{}', 'wrong')).status).toBe(401);
    const health = await fetch(`${server.serving.url}/health`);
    expect(health.status).toBe(200);
    const unknown = await fetch(`${server.serving.url}/v2/nothing`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).type).toBe('NotFoundError');
  });

  it('refuses a body over --max-body-bytes with 413 in the error shape, declared or streamed, and keeps serving', async () => {
    const big = JSON.stringify({ model: modelName, prompt: 'x'.repeat(2 * maxBodyBytes) });
    const declared = await post('/v1/completions', big);
    expect(declared.status).toBe(413);
    const error = await errorOf(declared);
    expect(error).toMatchObject({ type: 'BadRequestError', code: 413, param: null });
    expect(error.message).toMatch(/larger than the limit of 4096 bytes/);
    // No Content-Length: the limit counts the bytes as they arrive.
    const chunks = [big.slice(0, 3000), big.slice(3000)];
    const streamed = await fetch(`${server.serving.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: new ReadableStream({
        pull(controller) {
          const chunk = chunks.shift();
          if (chunk === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(chunk));
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    const small = await post(
      '/v1/completions',
      JSON.stringify({ model: modelName, prompt: 'hi', max_tokens: 1 }),
    );
    expect(small.status).toBe(200);
  });
});
