// TEST DOUBLE: a stand-in for an external LLM judge. A real HTTP server (node:http on 127.0.0.1, a free
// port) that plays an OpenAI-compatible `POST /v1/chat/completions`, scripted per test with a queue of
// behaviours: answer from the trajectory blocks it reads, send raw text, fail with a status, hang, …
// It records every request, and answers anything it was not scripted for (an extra call, a wrong path)
// with a 500 while remembering the problem, so `verify()` fails the test. Not a model: it never judges.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One `<trajectory id="…">` block as the double read it from the prompt. */
export interface SeenBlock {
  readonly label: string;
  /** The block's messages (one JSON value per line). */
  readonly messages: readonly unknown[];
  /** 0-based position of the block in the prompt. */
  readonly position: number;
}

export interface RecordedRequest {
  readonly path: string;
  readonly authorization?: string;
  readonly body: Record<string, unknown>;
  /** `response_format.type`, or undefined when none was asked for. */
  readonly responseFormat?: string;
  /** Parsed from the first user message, which holds the group. */
  readonly blocks: readonly SeenBlock[];
  readonly context?: readonly unknown[];
  readonly tools?: readonly unknown[];
  /** Every message the client sent (system, user, and any repair turns). */
  readonly messages: readonly { role: string; content: string | null }[];
}

export interface AnswerEntry {
  trajectory_id: string;
  explanation: string;
  score: unknown;
}

export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
}

export type JudgeBehaviour =
  /** A well-formed answer built from the blocks; `edit` may break it (reorder, drop, rename, …). */
  | {
      readonly kind: 'answer';
      readonly score: (block: SeenBlock, request: RecordedRequest) => unknown;
      readonly edit?: (entries: AnswerEntry[]) => unknown;
      readonly usage?: Usage | null;
    }
  /** Any message content, e.g. prose with JSON inside, or JSON with a bare NaN. */
  | {
      readonly kind: 'raw';
      readonly content: string | ((request: RecordedRequest) => string);
      readonly usage?: Usage | null;
      readonly finishReason?: string;
    }
  /** An error response with this status and JSON body. */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly body?: unknown;
      readonly headers?: Record<string, string>;
    }
  /** Answer only after `ms` (meant to exceed the client's timeout). */
  | { readonly kind: 'hang'; readonly ms: number }
  /** A 200 whose completion has no choices. */
  | { readonly kind: 'no-choices' };

export interface JudgeServerOptions {
  /** Which `response_format` types the endpoint accepts; others get a 400 naming the format. */
  readonly accepts?: { readonly json_schema?: boolean; readonly json_object?: boolean };
  /** Usage reported when a behaviour does not say (default 1000 prompt / 100 completion tokens). */
  readonly usage?: Usage;
}

export interface JudgeServer {
  /** OpenAI-style base URL, `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Problems with the calls received (unscripted, malformed); `verify()` throws when not empty. */
  readonly problems: string[];
  enqueue(...behaviours: JudgeBehaviour[]): void;
  /** Throws if any call was unexpected or a scripted behaviour was never used. */
  verify(): void;
  close(): Promise<void>;
}

interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

const DEFAULT_USAGE: Usage = { prompt_tokens: 1000, completion_tokens: 100 };

/** A behaviour that scores each block with `score(block)` and explains it briefly. */
export function answerWith(
  score: (block: SeenBlock) => unknown,
  edit?: (entries: AnswerEntry[]) => unknown,
): JudgeBehaviour {
  return { kind: 'answer', score, ...(edit ? { edit } : {}) };
}

export async function startJudgeServer(options: JudgeServerOptions = {}): Promise<JudgeServer> {
  const queue: JudgeBehaviour[] = [];
  const requests: RecordedRequest[] = [];
  const problems: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const accepts = { json_schema: true, json_object: true, ...options.accepts };

  const server = createServer((req, res) => {
    readBody(req)
      .then((text) => handle(req, res, text))
      .catch((error: unknown) => unexpected(res, `handler crashed: ${String(error)}`));
  });

  function unexpected(res: ServerResponse, problem: string): void {
    problems.push(problem);
    send(res, 500, { error: { message: `judge-server double: ${problem}`, type: 'test_double_error' } });
  }

  function handle(req: IncomingMessage, res: ServerResponse, text: string): void {
    const path = req.url ?? '';
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      unexpected(res, `unexpected ${req.method} ${path}`);
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      unexpected(res, `request body is not JSON: ${text.slice(0, 80)}`);
      return;
    }
    const request = recordRequest(path, req.headers.authorization, body);
    requests.push(request);
    const format = request.responseFormat;
    if ((format === 'json_schema' || format === 'json_object') && !accepts[format]) {
      // A fixed capability of the endpoint, not a scripted step: no behaviour is used up.
      const message = `response_format type '${format}' is not supported by this model`;
      send(res, 400, { error: { message, type: 'invalid_request_error' } });
      return;
    }
    const behaviour = queue.shift();
    if (!behaviour) {
      unexpected(res, `unscripted call #${requests.length} (queue empty)`);
      return;
    }
    if (behaviour.kind === 'hang') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) send(res, 200, completion('{"scores": []}', null));
      }, behaviour.ms);
      timers.add(timer);
      return;
    }
    const reply = replyFor(behaviour, request);
    send(res, reply.status, reply.body, reply.headers);
  }

  function replyFor(behaviour: Exclude<JudgeBehaviour, { kind: 'hang' }>, request: RecordedRequest): Reply {
    switch (behaviour.kind) {
      case 'answer': {
        const entries: AnswerEntry[] = request.blocks.map((block) => ({
          trajectory_id: block.label,
          explanation: `block ${block.position + 1} of ${request.blocks.length}`,
          score: behaviour.score(block, request),
        }));
        const content = JSON.stringify(behaviour.edit ? behaviour.edit(entries) : { scores: entries });
        return { status: 200, body: completion(content, behaviour.usage) };
      }
      case 'raw': {
        const content =
          typeof behaviour.content === 'function' ? behaviour.content(request) : behaviour.content;
        return { status: 200, body: completion(content, behaviour.usage, behaviour.finishReason) };
      }
      case 'status':
        return {
          status: behaviour.status,
          body: behaviour.body ?? { error: { message: `status ${behaviour.status}` } },
          ...(behaviour.headers ? { headers: behaviour.headers } : {}),
        };
      case 'no-choices':
        return {
          status: 200,
          body: { id: 'chatcmpl-double', object: 'chat.completion', choices: [], usage: DEFAULT_USAGE },
        };
    }
  }

  function completion(content: string, usage: Usage | null | undefined, finishReason = 'stop'): object {
    return {
      id: 'chatcmpl-double',
      object: 'chat.completion',
      model: 'judge-double',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finishReason }],
      ...(usage === null ? {} : { usage: usage ?? options.usage ?? DEFAULT_USAGE }),
    };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    problems,
    enqueue: (...behaviours) => {
      queue.push(...behaviours);
    },
    verify() {
      const left = queue.length > 0 ? [`${queue.length} scripted behaviour(s) never used`] : [];
      const all = [...problems, ...left];
      if (all.length > 0) throw new Error(`judge-server double: ${all.join('; ')}`);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

function recordRequest(
  path: string,
  authorization: string | undefined,
  body: Record<string, unknown>,
): RecordedRequest {
  const messages = Array.isArray(body.messages) ? (body.messages as RecordedRequest['messages']) : [];
  const user = messages.find((message) => message.role === 'user')?.content ?? '';
  const format = body.response_format as { type?: string } | undefined;
  return {
    path,
    ...(authorization ? { authorization } : {}),
    body,
    ...(format?.type ? { responseFormat: format.type } : {}),
    blocks: [...user.matchAll(/<trajectory id="([^"]+)">\n?([\s\S]*?)<\/trajectory>/g)].map(
      (match, position) => ({
        label: match[1] as string,
        messages: jsonLines(match[2] ?? ''),
        position,
      }),
    ),
    ...section(user, 'context', 'context'),
    ...section(user, 'available_tools', 'tools'),
    messages,
  };
}

function section(text: string, tag: string, key: 'context' | 'tools'): Partial<RecordedRequest> {
  const match = new RegExp(`<${tag}>\\n([\\s\\S]*?)</${tag}>`).exec(text);
  return match ? { [key]: jsonLines(match[1] ?? '') } : {};
}

function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
