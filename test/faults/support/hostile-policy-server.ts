// A test double for an inference endpoint that a hostile (or broken) policy sits behind: an
// OpenAI-compatible /v1/chat/completions on loopback whose answers are scripted to be what a real
// model cannot be made to send on purpose — one reply with thousands of tool calls, a reply of tens of
// megabytes (whole or streamed) — or, for bursts, a short final answer at once. It writes big bodies
// in chunks with backpressure and stops when the reader goes away, counting the bytes it got out, so a
// scenario can tell a reader that cancels from one that reads everything. Fails loudly on other paths.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HostileMode =
  /** The first turn calls `lookup` `calls` times; any later turn answers "0". */
  | { readonly kind: 'tool-calls'; readonly calls: number }
  /** A reply of `bytes` bytes of content: one JSON body, or server-sent events when the request streams. */
  | { readonly kind: 'huge'; readonly bytes: number }
  /** A final answer at once. */
  | { readonly kind: 'answer' };

export class HostilePolicyServer {
  mode: HostileMode = { kind: 'answer' };
  /** Completions requested, by mode kind. */
  readonly requests = new Map<string, number>();
  /** Bytes of huge bodies the socket accepted, per huge reply (in order). */
  readonly hugeBytesWritten: number[] = [];
  /** Requests to any other path (a scenario asserts there are none). */
  unexpected = 0;
  readonly #server: Server;
  #url = '';

  constructor() {
    this.#server = createServer((request, response) => void this.#handle(request, response));
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const { port } = this.#server.address() as AddressInfo;
    this.#url = `http://127.0.0.1:${port}/v1`;
    return this.#url;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of request) raw += String(chunk);
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      this.unexpected += 1;
      response.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw) as { model?: string; stream?: boolean; messages?: { role: string }[] };
    const mode = this.mode;
    this.requests.set(mode.kind, (this.requests.get(mode.kind) ?? 0) + 1);
    const model = body.model ?? 'hostile';
    switch (mode.kind) {
      case 'answer':
        return json(response, completion(model, { role: 'assistant', content: '0' }));
      case 'tool-calls': {
        const answered = (body.messages ?? []).some((message) => message.role === 'assistant');
        if (answered) return json(response, completion(model, { role: 'assistant', content: '0' }));
        const tool_calls = Array.from({ length: mode.calls }, (_, n) => ({
          id: `flood_${n}`,
          type: 'function',
          function: { name: 'lookup', arguments: JSON.stringify({ key: `k${n}` }) },
        }));
        return json(
          response,
          completion(model, { role: 'assistant', content: null, tool_calls }, 'tool_calls'),
        );
      }
      case 'huge':
        this.hugeBytesWritten.push(0);
        return body.stream
          ? this.#hugeStream(response, model, mode.bytes)
          : this.#hugeWhole(response, model, mode.bytes);
    }
  }

  /** `{"choices":[{"message":{"content":"xxxx…"}}]}` with `bytes` x's, written 64 KiB at a time. */
  async #hugeWhole(response: ServerResponse, model: string, bytes: number): Promise<void> {
    response.writeHead(200, { 'content-type': 'application/json' });
    const head = `{"id":"c","object":"chat.completion","model":${JSON.stringify(model)},"choices":[{"index":0,"message":{"role":"assistant","content":"`;
    const tail = '"},"finish_reason":"stop"}]}';
    await this.#pour(response, head, 'x'.repeat(64 * 1024), bytes, tail);
  }

  /** One content delta of 4 KiB per event until `bytes`, then [DONE]. */
  async #hugeStream(response: ServerResponse, model: string, bytes: number): Promise<void> {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const filler = event({ content: 'z'.repeat(4096) });
    await this.#pour(
      response,
      event({ role: 'assistant', content: '' }),
      filler,
      bytes,
      `${event({}, 'stop')}data: [DONE]\n\n`,
    );
  }

  /** Writes head, then filler until `bytes` of it, then tail; stops early when the reader goes away. */
  async #pour(
    response: ServerResponse,
    head: string,
    filler: string,
    bytes: number,
    tail: string,
  ): Promise<void> {
    const slot = this.hugeBytesWritten.length - 1;
    const closed = new Promise<void>((resolve) => response.once('close', resolve));
    let gone = false;
    void closed.then(() => {
      gone = true;
    });
    response.write(head);
    for (let sent = 0; sent < bytes && !gone; sent += filler.length) {
      const flushed = response.write(filler);
      this.hugeBytesWritten[slot] = sent + filler.length;
      if (!flushed) await Promise.race([new Promise((resolve) => response.once('drain', resolve)), closed]);
    }
    if (!gone) response.end(tail);
  }
}

function completion(model: string, message: Record<string, unknown>, finish = 'stop') {
  return {
    id: 'c',
    object: 'chat.completion',
    model,
    choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

function json(response: ServerResponse, value: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(value));
}
