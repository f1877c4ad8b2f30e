// TEST DOUBLE: an OpenAI-compatible chat completions endpoint (node:http on 127.0.0.1, a free port)
// that plays a perfect multi-hop agent: it reads the conversation and calls `lookup` on the key the
// prompt or the last tool result names, then answers the value it was told (repeating the result). Replies carry vLLM's
// extras when asked (`token_ids` = the UTF-8 bytes of the reply text, `prompt_token_ids`, logprobs),
// so recorded turns are token-exact. Faults are scripted per call (a status with a body, a body of any
// text, a delay, a dropped connection) to exercise retries, in-process or through `POST /__control/fail` from another
// process (`GET /__control/stats` counts calls). Every completion request is recorded, and every
// assistant message answered. With `hostileText` set, replies carry text Postgres cannot hold (see
// hostileContent, hostileArguments). Not a model.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly body?: unknown;
      readonly retryAfter?: string;
    }
  | { readonly kind: 'drop' }
  | { readonly kind: 'text'; readonly body: string }
  /** Answers as usual, but only after `ms` (a call that hangs past its client's timeout). */
  | { readonly kind: 'delay'; readonly ms: number }
  /** Answers as usual: holds a place in the queue, so the faults after it hit later calls. */
  | { readonly kind: 'answer' };

export interface InferenceRequest {
  readonly path: string;
  readonly authorization?: string;
  readonly body: Record<string, unknown>;
}

export interface InferenceDouble {
  /** API root, e.g. http://127.0.0.1:41234/v1. */
  readonly baseUrl: string;
  readonly requests: InferenceRequest[];
  /** Completions answered with 200 to a client still waiting (one that timed out is not counted). */
  readonly completions: number;
  /** Those completions in order, with the ids of the tool calls each carried (unique per reply). */
  readonly replies: readonly { readonly toolCallIds: readonly string[] }[];
  /** Queues faults for the next calls, one per call. */
  fail(...faults: Fault[]): void;
  /** Milliseconds each answer waits before it is sent (simulated model time). */
  delayMs: number;
  /** When true, replies carry NULs and lone surrogates in content and tool-call arguments. */
  hostileText: boolean;
  /** The assistant message of each 200 answer, in order, as sent. */
  readonly answered: Record<string, unknown>[];
  /** Holds every answer (after its delay) until `resume()`: nothing is delivered meanwhile. */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

interface Message {
  role: string;
  /** Text, or OpenAI text parts. */
  content?: string | { text?: string }[] | null;
}

function textOf(content: Message['content']): string {
  if (Array.isArray(content)) return content.map((part) => part.text ?? '').join('');
  return content ?? '';
}

/** The next move of a perfect multi-hop agent, as assistant text or one lookup call. */
export function multiHopMove(messages: readonly Message[]): { text: string } | { lookup: string } {
  const last = messages.at(-1);
  if (last?.role === 'user') {
    const key = /key "?([a-z]{1,2})\b/.exec(textOf(last.content))?.[1];
    return key ? { lookup: key } : { text: 'I do not know.' };
  }
  if (last?.role === 'tool') {
    const result = /^(next|value) "?([^"\s]+)"?$/.exec(textOf(last.content).trim());
    if (result?.[1] === 'next') return { lookup: result[2] as string };
    // Answers by repeating the result (`value "7"`), as the scripted solver does.
    if (result?.[1] === 'value') return { text: textOf(last.content).trim() };
    return { text: '0' };
  }
  return { text: 'ok' };
}

export async function startInferenceDouble(options: { delayMs?: number } = {}): Promise<InferenceDouble> {
  const faults: Fault[] = [];
  const requests: InferenceRequest[] = [];
  const replies: { toolCallIds: string[] }[] = [];
  let completions = 0;
  let callNumber = 0;
  let paused: { promise: Promise<void>; release: () => void } | undefined;
  const double = {
    baseUrl: '',
    requests,
    replies,
    get completions() {
      return completions;
    },
    fail: (...more: Fault[]) => {
      faults.push(...more);
    },
    delayMs: options.delayMs ?? 0,
    hostileText: false,
    answered: [] as Record<string, unknown>[],
    pause: () => {
      if (paused) return;
      let release = () => {};
      const promise = new Promise<void>((resolve) => {
        release = resolve;
      });
      paused = { promise, release };
    },
    resume: () => {
      paused?.release();
      paused = undefined;
    },
    close: async () => {},
  };
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const text = await readBody(request);
    let body: Record<string, unknown>;
    try {
      body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
    } catch {
      return send(response, 400, { error: { message: 'body is not JSON' } });
    }
    // Control routes, for callers in another process (the Worker under test, the bench).
    if (request.url === '/__control/fail' && request.method === 'POST') {
      faults.push(...((body.faults ?? []) as Fault[]));
      return send(response, 200, { queued: faults.length });
    }
    if (request.url === '/__control/stats') {
      return send(response, 200, { requests: requests.length, completions });
    }
    requests.push({
      path: request.url ?? '',
      ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
      body,
    });
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      return send(response, 404, { error: { message: `no route ${request.method} ${request.url}` } });
    }
    const fault = faults.shift();
    if (fault?.kind === 'drop') return request.socket.destroy();
    if (fault?.kind === 'text') return send(response, 200, fault.body);
    if (fault?.kind === 'status') {
      if (fault.retryAfter) response.setHeader('retry-after', fault.retryAfter);
      return send(response, fault.status, fault.body ?? { error: { message: `scripted ${fault.status}` } });
    }
    const delayMs = fault?.kind === 'delay' ? fault.ms : double.delayMs;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    while (paused) await paused.promise;
    // The client gave up waiting (its timeout): nobody receives this answer, so it is not a completion.
    if (response.destroyed) return;
    callNumber += 1;
    try {
      const answer = completion(body, callNumber, double.hostileText);
      completions += 1;
      replies.push({ toolCallIds: toolCallIdsOf(answer) });
      double.answered.push((answer.choices as { message: Record<string, unknown> }[])[0]?.message ?? {});
      if (body.stream === true) return streamCompletion(response, answer, body);
      send(response, 200, answer);
    } catch (error) {
      send(response, 500, { error: { message: `inference double: ${String(error)}` } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  double.baseUrl = `http://127.0.0.1:${port}/v1`;
  double.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return double;
}

/** A reply's text with what Postgres cannot hold: a NUL, a lone high and a lone low surrogate, and a
 *  backslash sequence that looks like the store's escapes (`\u0000` spelled out), which must survive too. */
export function hostileContent(text: string): string {
  return `${text}\u0000 \\u0000 \\\\ \uD800|\uDC00`;
}

/** Tool-call arguments holding a raw lone surrogate in a JSON string and a raw NUL (so not valid JSON:
 *  the model's mistake, which the episode answers with a tool error). */
export function hostileArguments(key: string): string {
  return `{"key":"${key}","note":"\uDBFF\u0000"}`;
}

function toolCallIdsOf(answer: Record<string, unknown>): string[] {
  const [choice] = answer.choices as { message: { tool_calls?: { id: string }[] } }[];
  return (choice?.message.tool_calls ?? []).map((call) => call.id);
}

function completion(
  body: Record<string, unknown>,
  callNumber: number,
  hostile = false,
): Record<string, unknown> {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Message[];
  const move = multiHopMove(messages);
  const toolCall =
    'lookup' in move
      ? {
          id: `call_d${callNumber}`,
          type: 'function',
          function: {
            name: 'lookup',
            arguments: hostile ? hostileArguments(move.lookup) : JSON.stringify({ key: move.lookup }),
          },
        }
      : undefined;
  // The text the ids stand for: what a Hermes-style model would emit for this reply.
  const sampled = toolCall
    ? `<tool_call>${toolCall.function.arguments}</tool_call>`
    : hostile
      ? hostileContent((move as { text: string }).text)
      : (move as { text: string }).text;
  const ids = [...new TextEncoder().encode(sampled)];
  const logprobs = ids.map((_, i) => -0.125 - i / 1024);
  const wantIds = body.return_token_ids === true;
  return {
    id: `chatcmpl-double-${callNumber}`,
    object: 'chat.completion',
    model: typeof body.model === 'string' ? body.model : 'double',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: toolCall ? null : sampled,
          ...(toolCall ? { tool_calls: [toolCall] } : {}),
        },
        finish_reason: toolCall ? 'tool_calls' : 'stop',
        logprobs:
          body.logprobs === true
            ? { content: ids.map((id, i) => ({ token: String(id), logprob: logprobs[i] })) }
            : null,
        ...(wantIds ? { token_ids: ids } : {}),
      },
    ],
    ...(wantIds ? { prompt_token_ids: [1, 2, 3, messages.length] } : {}),
    usage: { prompt_tokens: 4, completion_tokens: ids.length, total_tokens: 4 + ids.length },
  };
}

/**
 * The same completion as server-sent chunks, the way vLLM streams: a role chunk (with
 * `prompt_token_ids`), one chunk per sampled token (content piece, its logprob, its id), a tool call
 * as id and name first and its arguments in two pieces, the finish reason, the usage chunk when
 * `stream_options.include_usage` is set, then `[DONE]`.
 */
function streamCompletion(
  response: ServerResponse,
  answer: Record<string, unknown>,
  body: Record<string, unknown>,
): void {
  const choice = (answer.choices as Record<string, unknown>[])[0] as Record<string, unknown>;
  const message = choice.message as {
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  };
  const ids = (choice.token_ids as number[] | undefined) ?? [];
  const logprobs = (choice.logprobs as { content: unknown[] } | null)?.content;
  const base = { id: answer.id, object: 'chat.completion.chunk', model: answer.model };
  const chunks: unknown[] = [
    {
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      ...(answer.prompt_token_ids ? { prompt_token_ids: answer.prompt_token_ids } : {}),
    },
  ];
  const text = message.content ?? '';
  const pieces = Math.max(ids.length, text.length);
  for (let i = 0; i < pieces; i++) {
    chunks.push({
      ...base,
      choices: [
        {
          index: 0,
          delta: message.tool_calls ? {} : { content: text[i] ?? '' },
          logprobs: logprobs ? { content: [logprobs[i]] } : null,
          finish_reason: null,
          ...(ids.length > 0 ? { token_ids: [ids[i]] } : {}),
        },
      ],
    });
  }
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    const half = Math.floor(call.function.arguments.length / 2);
    chunks.push({
      ...base,
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index,
                id: call.id,
                type: 'function',
                function: { name: call.function.name, arguments: call.function.arguments.slice(0, half) },
              },
            ],
          },
          finish_reason: null,
        },
      ],
    });
    chunks.push({
      ...base,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index, function: { arguments: call.function.arguments.slice(half) } }] },
          finish_reason: null,
        },
      ],
    });
  }
  chunks.push({
    ...base,
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: choice.finish_reason }],
  });
  const options = body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage) chunks.push({ ...base, choices: [], usage: answer.usage });
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const chunk of chunks) response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  response.end('data: [DONE]\n\n');
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}
