import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../protocol/chat.ts';
import { multiHop, solve } from '../environments/multi-hop.ts';
import { InMemoryTrajectorySink } from '../episode/in-memory-trajectory-sink.ts';
import { runEpisode } from '../episode/run-episode.ts';
import { OpenAIPolicyClient } from './openai-policy-client.ts';
import type { PolicyRequest } from './policy-client.ts';
import { isRetryablePolicyError, PolicyError } from './policy-error.ts';

interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly url: string | undefined;
  readonly body: Record<string, unknown>;
}

type Handler = (body: Record<string, unknown>, response: ServerResponse) => void;

/** A stand-in for a vLLM server on a free loopback port: records requests, answers with `handler`. */
async function startVllmStandIn(handler: Handler) {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => {
      raw += chunk;
    });
    request.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      received.push({ headers: request.headers, url: request.url, body });
      handler(body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  servers.push(server);
  return { baseUrl: `http://127.0.0.1:${port}/v1`, received };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function json(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(value));
}

/** A chat completion as vLLM >= 0.10.2 returns it with `logprobs` and `return_token_ids`. */
function vllmCompletion(options: {
  model: string;
  content: string | null;
  toolCalls?: { id: string; name: string; arguments: string }[];
  tokenIds: number[];
  logprobs: number[];
  promptTokenIds: number[];
  finishReason: string;
}) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: options.model,
    prompt_token_ids: options.promptTokenIds,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: options.content,
          tool_calls: (options.toolCalls ?? []).map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
        },
        logprobs: {
          content: options.logprobs.map((logprob, i) => ({
            token: `t${i}`,
            logprob,
            bytes: [],
            top_logprobs: [],
          })),
        },
        finish_reason: options.finishReason,
        token_ids: options.tokenIds,
      },
    ],
    usage: { prompt_tokens: options.promptTokenIds.length, completion_tokens: options.tokenIds.length },
  };
}

const messages: ChatMessage[] = [{ role: 'user', content: 'Find the value of key ab.' }];

function request(overrides: Partial<PolicyRequest> = {}): PolicyRequest {
  return {
    messages,
    tools: multiHop.tools.map((tool) => tool.spec),
    model: 'agent@3',
    temperature: 1,
    maxTokens: 64,
    seed: 11,
    signal: AbortSignal.timeout(5_000),
    ...overrides,
  };
}

describe('OpenAIPolicyClient', () => {
  it('sends tool_choice only when it is "required" and there are tools', async () => {
    const standIn = await startVllmStandIn((_, response) =>
      json(
        response,
        200,
        vllmCompletion({
          model: 'agent@3',
          content: 'x',
          tokenIds: [1],
          logprobs: [-1],
          promptTokenIds: [2],
          finishReason: 'stop',
        }),
      ),
    );
    const client = new OpenAIPolicyClient({ baseUrl: standIn.baseUrl, now: () => 0 });
    await client.complete(request({ toolChoice: 'required' }));
    await client.complete(request({ toolChoice: 'auto' }));
    await client.complete(request({ toolChoice: 'required', tools: [] }));
    expect(standIn.received.map((sent) => sent.body.tool_choice)).toEqual(['required', undefined, undefined]);
  });

  it('marks the tools strict on the wire when asked', async () => {
    const standIn = await startVllmStandIn((_, response) =>
      json(
        response,
        200,
        vllmCompletion({
          model: 'agent@3',
          content: 'x',
          tokenIds: [1],
          logprobs: [-1],
          promptTokenIds: [2],
          finishReason: 'stop',
        }),
      ),
    );
    const client = new OpenAIPolicyClient({ baseUrl: standIn.baseUrl, now: () => 0 });
    await client.complete(request({ strictTools: true }));
    await client.complete(request());
    const spec = multiHop.tools[0]?.spec;
    expect(standIn.received.map((sent) => sent.body.tools)).toEqual([
      [{ ...spec, function: { ...spec?.function, strict: true } }],
      [spec],
    ]);
  });

  it('asks a vLLM-shaped server for token ids and logprobs, and reads tool calls, ids and logprobs back', async () => {
    const standIn = await startVllmStandIn((_, response) =>
      json(
        response,
        200,
        vllmCompletion({
          model: 'agent@3',
          content: null,
          toolCalls: [{ id: 'chatcmpl-tool-1', name: 'lookup', arguments: '{"key": "ab"}' }],
          tokenIds: [151657, 198, 4913, 151658],
          logprobs: [-0.01, -0.5, -1.25, -0.001],
          promptTokenIds: [151644, 8948, 198],
          finishReason: 'tool_calls',
        }),
      ),
    );
    const client = new OpenAIPolicyClient({
      baseUrl: `${standIn.baseUrl}/`,
      apiKey: 'sk-local',
      now: () => 0,
    });
    const response = await client.complete(request());

    expect(standIn.received).toHaveLength(1);
    const sent = standIn.received[0] as Received;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-local');
    expect(sent.body).toEqual({
      model: 'agent@3',
      messages,
      tools: [multiHop.tools[0]?.spec],
      temperature: 1,
      max_completion_tokens: 64,
      seed: 11,
      logprobs: true,
      return_token_ids: true,
      stream: false,
    });
    expect(response).toEqual({
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'chatcmpl-tool-1',
            type: 'function',
            function: { name: 'lookup', arguments: '{"key": "ab"}' },
          },
        ],
      },
      finishReason: 'tool_calls',
      completionTokenIds: [151657, 198, 4913, 151658],
      completionLogprobs: [-0.01, -0.5, -1.25, -0.001],
      promptTokenIds: [151644, 8948, 198],
      promptTokenCount: 3,
      servedBy: 'agent@3',
      latencyMs: 0,
    });
  });

  it('keeps what an endpoint without token ids returns, marked as not token-exact', async () => {
    // OpenAI's shape: logprobs but no ids; arguments sometimes arrive as an object from other servers.
    const standIn = await startVllmStandIn((_, response) =>
      json(response, 200, {
        model: 'gpt-4o-mini-2024-07-18',
        choices: [
          {
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_x', type: 'function', function: { name: 'lookup', arguments: { key: 'ab' } } },
              ],
            },
            logprobs: { content: [{ token: 'x', logprob: -0.25 }] },
            finish_reason: 'weird',
          },
        ],
        usage: { prompt_tokens: 40 },
      }),
    );
    const client = new OpenAIPolicyClient({
      baseUrl: standIn.baseUrl,
      requestTokenIds: false,
      maxTokensField: 'max_tokens',
    });
    const response = await client.complete(request({ seed: undefined }));
    const sent = standIn.received[0]?.body ?? {};
    expect(sent).not.toHaveProperty('return_token_ids');
    expect(sent).not.toHaveProperty('seed');
    expect(sent).not.toHaveProperty('max_completion_tokens');
    expect(sent.max_tokens).toBe(64);
    expect(standIn.received[0]?.headers.authorization).toBeUndefined();
    expect(response.completionTokenIds).toBeUndefined();
    expect(response.completionLogprobs).toBeUndefined();
    expect(response.untokenizedLogprobs).toEqual([-0.25]);
    expect(response.promptTokenCount).toBe(40);
    expect(response.finishReason).toBe('unknown');
    expect(response.servedBy).toBe('gpt-4o-mini-2024-07-18');
    expect(response.message.tool_calls?.[0]?.function.arguments).toBe('{"key":"ab"}');
  });

  it('reports HTTP failures with their status, honouring Retry-After, and retries only the transient ones', async () => {
    const standIn = await startVllmStandIn((body, response) => {
      if (body.model === 'busy') return json(response, 503, { error: 'overloaded' }, { 'retry-after': '2' });
      // OpenAI's own header, read before Retry-After.
      if (body.model === 'limited')
        return json(response, 429, { error: 'slow down' }, { 'retry-after-ms': '250', 'retry-after': '1' });
      json(response, 404, { error: { message: 'The model `nope` does not exist.' } });
    });
    const client = new OpenAIPolicyClient({ baseUrl: standIn.baseUrl });
    const busy = await client.complete(request({ model: 'busy' })).catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(PolicyError);
    expect(busy).toMatchObject({ code: 'http', status: 503, retryAfterMs: 2_000 });
    expect(isRetryablePolicyError(busy)).toBe(true);
    const limited = await client.complete(request({ model: 'limited' })).catch((error: unknown) => error);
    expect(limited).toMatchObject({ code: 'http', status: 429, retryAfterMs: 250 });
    expect(isRetryablePolicyError(limited)).toBe(true);
    const missing = await client.complete(request({ model: 'nope' })).catch((error: unknown) => error);
    expect(missing).toMatchObject({ code: 'http', status: 404 });
    expect((missing as Error).message).toContain('The model `nope` does not exist.');
    expect(isRetryablePolicyError(missing)).toBe(false);
  });

  it('tells a malformed body, a timeout, a cancellation and an unreachable server apart', async () => {
    const standIn = await startVllmStandIn((body, response) => {
      if (body.model === 'garbled') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"choices": [');
      } else if (body.model === 'empty') {
        json(response, 200, { choices: [] });
      }
      // Any other model: never answer (the client's signal decides).
    });
    const client = new OpenAIPolicyClient({ baseUrl: standIn.baseUrl });
    await expect(client.complete(request({ model: 'garbled' }))).rejects.toMatchObject({
      code: 'invalid-response',
    });
    const empty = await client.complete(request({ model: 'empty' })).catch((error: unknown) => error);
    expect(empty).toMatchObject({ code: 'invalid-response' });
    expect((empty as Error).message).toMatch(/choices/);
    await expect(
      client.complete(request({ model: 'slow', signal: AbortSignal.timeout(30) })),
    ).rejects.toMatchObject({
      code: 'timeout',
    });
    const controller = new AbortController();
    const pending = client.complete(request({ model: 'slow', signal: controller.signal }));
    controller.abort();
    const cancelled = await pending.catch((error: unknown) => error);
    expect(cancelled).toMatchObject({ code: 'cancelled' });
    expect(isRetryablePolicyError(cancelled)).toBe(false);

    // A port that was just free: nothing listens there.
    const closed = await startVllmStandIn(() => {});
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const unreachable = new OpenAIPolicyClient({ baseUrl: closed.baseUrl });
    const refused = await unreachable.complete(request()).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'network' });
    expect((refused as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('stops reading a body past maxResponseBytes and fails without a retry', async () => {
    // A runaway endpoint: 50 MB of reply in 64 KiB writes, stopped early when the client goes away.
    let written = 0;
    const standIn = await startVllmStandIn((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"choices":[{"index":0,"message":{"role":"assistant","content":"');
      const chunk = 'x'.repeat(64 * 1024);
      const more = () => {
        while (written < 50 * 1024 * 1024 && !response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', more);
        }
        response.end('"}}]}');
      };
      more();
    });
    const client = new OpenAIPolicyClient({ baseUrl: standIn.baseUrl, maxResponseBytes: 256 * 1024 });
    const error = await client.complete(request()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).message).toMatch(/^reply-too-large: .* passed 262144 bytes/);
    expect(isRetryablePolicyError(error)).toBe(false);
    // The server was cut off long before 50 MB (socket buffers allow some read-ahead).
    expect(written).toBeLessThan(20 * 1024 * 1024);
  });

  it('rejects a base URL that is not absolute, naming it', () => {
    expect(() => new OpenAIPolicyClient({ baseUrl: 'localhost:8000' })).toThrow(
      /baseUrl must be an absolute http\(s\) URL.*"localhost:8000"/,
    );
  });
});

describe('a multi-hop episode over HTTP', () => {
  it('plays the solver through a vLLM stand-in and stores every assistant turn token-exact', async () => {
    const task = multiHop.sampleTask('eval', 21);
    const replies = solve(task).filter((message) => message.role === 'assistant');
    let turn = 0;
    const standIn = await startVllmStandIn((_, response) => {
      const reply = replies[turn];
      turn += 1;
      if (reply?.role !== 'assistant') return json(response, 500, { error: 'script used up' });
      const call = reply.tool_calls?.[0];
      json(
        response,
        200,
        vllmCompletion({
          model: 'agent@3',
          content: reply.content,
          ...(call
            ? { toolCalls: [{ id: call.id, name: call.function.name, arguments: call.function.arguments }] }
            : {}),
          tokenIds: [turn, turn + 1],
          logprobs: [-0.5, -0.25],
          promptTokenIds: [1, 2, 3],
          finishReason: call ? 'tool_calls' : 'stop',
        }),
      );
    });
    const sink = new InMemoryTrajectorySink();
    const result = await runEpisode({
      environment: multiHop,
      task,
      policy: new OpenAIPolicyClient({ baseUrl: standIn.baseUrl }),
      sink,
      model: 'agent@3',
    });
    expect(result).toMatchObject({ status: 'finished', reward: 1 });
    expect(standIn.received).toHaveLength(replies.length);
    const assistants = sink.turns.filter((stored) => stored.role === 'assistant');
    expect(assistants.map((stored) => stored.completionTokenIds)).toEqual(
      replies.map((_, i) => [i + 1, i + 2]),
    );
    expect(
      assistants.every((stored) => stored.metadata?.tokenExact === true && stored.servedBy === 'agent@3'),
    ).toBe(true);
  });
});
