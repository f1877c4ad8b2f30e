// The recording proxy: forwards one chat completions request to the inference endpoint and records
// the exchange as turns of the trajectory the client names. Only what the upstream accepted is
// stored: the request's new messages and the reply (with its token ids and logprobs when the
// endpoint returns them) are appended together, in one statement, after a 2xx reply parses.
// Streamed calls pass the events through as they come and record the exchange when the stream ends
// (before the final `[DONE]`, so a client that saw it knows the turn is stored). An upstream error
// (a status, no answer, a body that is no completion) passes through and stores nothing, so the
// client may retry with the same or a different prompt. The request's history is checked against the
// stored digest of the last turn (check-history.ts), so a call does not read the turns stored before.
import { isStoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import { proxyModel } from '../routing/proxy-model.ts';
import { checkHistory } from './check-history.ts';
import { type ClientAsked, clientChunk, clientResponse } from './client-response.ts';
import { promptTurn, replyTurn } from './proxy-turns.ts';
import { requestTools } from './request-tools.ts';
import { type ProxyRequest, toChatMessage } from './proxy-request.ts';
import { SseParser } from './sse-parser.ts';
import { ChatStreamAccumulator } from './stream-accumulator.ts';
import { callUpstream, openUpstream, type UpstreamEndpoint } from './upstream.ts';

export interface ProxyContext {
  readonly store: Store;
  readonly upstream: UpstreamEndpoint;
  /** Where a failure to record a streamed reply is reported (the client sees an error event too). */
  readonly logError?: (error: unknown) => void;
  /** Keeps the store open while a streamed reply is still being read (see with-store.ts). */
  readonly keepStore?: () => () => void;
}

export interface ProxyCall {
  readonly trajectoryId: string;
  /** `x-edgerl-policy`: the policy to route to when the trajectory has no recorded model. */
  readonly policy?: string;
  readonly request: ProxyRequest;
  readonly signal?: AbortSignal;
}

export interface ProxyResult {
  readonly status: number;
  readonly contentType: string;
  /** JSON for a recorded reply, server-sent events for a stream, the upstream's text for its error. */
  readonly body: string | ReadableStream<Uint8Array>;
  /** Index of the assistant turn recorded (or, for a stream, to be recorded at its end). */
  readonly turnIndex?: number;
  readonly model: string;
}

interface Exchange {
  readonly messages: readonly ChatMessage[];
  readonly model: string;
  readonly upstreamBody: Record<string, unknown>;
  /** The request's messages the trajectory does not hold yet, stored with the reply. */
  readonly promptTurns: readonly TurnInput[];
  /** The request's tools when they differ from the stored list. */
  readonly tools: ToolSpec[] | undefined;
  readonly asked: ClientAsked;
}

export async function recordChatCompletion(context: ProxyContext, call: ProxyCall): Promise<ProxyResult> {
  const exchange = await begin(context, call);
  return call.request.stream ? recordStream(context, call, exchange) : recordWhole(context, call, exchange);
}

async function begin(context: ProxyContext, call: ProxyCall): Promise<Exchange> {
  const { store } = context;
  const { request, trajectoryId } = call;
  const head = await store.getTrajectoryHead(trajectoryId).catch((error: unknown) => {
    if (isStoreError(error, 'validation')) {
      throw invalidField('x-edgerl-trajectory', 'must be a trajectory id (a uuid)');
    }
    throw error;
  });
  const { trajectory } = head;
  if (trajectory.status !== 'running') {
    throw new ApiError(
      'conflict',
      `trajectory ${trajectoryId} is ${trajectory.status}; it takes no more turns`,
    );
  }
  const messages = request.messages.map(toChatMessage);
  const fresh = await checkHistory(store, head, messages);
  if (!fresh.ok) throw new ApiError('conflict', `${fresh.field}: ${fresh.message}`, { field: fresh.field });
  const model = await proxyModel(store, trajectory, {
    ...(call.policy !== undefined ? { policy: call.policy } : {}),
    requested: request.model,
  });
  const upstreamBody: Record<string, unknown> = {
    ...request,
    model,
    logprobs: true,
    ...(context.upstream.requestTokenIds ? { return_token_ids: true } : {}),
  };
  return {
    messages,
    model,
    upstreamBody,
    promptTurns: fresh.messages.map((message, offset) =>
      promptTurn(trajectoryId, fresh.firstIndex + offset, message),
    ),
    tools: requestTools(request.tools, trajectory.tools),
    asked: { logprobs: request.logprobs === true, tokenIds: request.return_token_ids === true },
  };
}

async function recordWhole(context: ProxyContext, call: ProxyCall, exchange: Exchange): Promise<ProxyResult> {
  const { model } = exchange;
  const upstream = await callUpstream(context.upstream, exchange.upstreamBody, call.signal);
  if (upstream.status < 200 || upstream.status >= 300) {
    return { status: upstream.status, contentType: upstream.contentType, body: upstream.text, model };
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(upstream.text) as Record<string, unknown>;
  } catch (error) {
    throw new ApiError('bad-gateway', 'inference endpoint: the completion is not JSON', { cause: error });
  }
  const index = exchange.messages.length;
  const { turn, toolCallIds } = replyTurn(call, json, model, index, upstream.latencyMs);
  await storeExchange(context.store, call.trajectoryId, exchange, turn);
  const body = clientResponse(json, exchange.asked, toolCallIds);
  return {
    status: 200,
    contentType: 'application/json',
    body: JSON.stringify(body),
    turnIndex: index,
    model,
  };
}

async function recordStream(
  context: ProxyContext,
  call: ProxyCall,
  exchange: Exchange,
): Promise<ProxyResult> {
  const { model } = exchange;
  const clientOptions = call.request.stream_options as { include_usage?: unknown } | null | undefined;
  const upstreamBody = {
    ...exchange.upstreamBody,
    stream: true,
    // The usage chunk carries the prompt token count the turn records.
    stream_options: { ...clientOptions, include_usage: true },
  };
  const started = performance.now();
  const response = await openUpstream(context.upstream, upstreamBody, call.signal);
  if (!response.ok || !response.body) {
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? 'application/json';
    return { status: response.status, contentType, body: text, model };
  }
  const index = exchange.messages.length;
  const asked = { ...exchange.asked, usage: clientOptions?.include_usage === true };
  const accumulator = new ChatStreamAccumulator();
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const reader = response.body.getReader();
  const letGo = context.keepStore?.() ?? (() => {});
  let done = false;
  const forward = (events: ReturnType<SseParser['push']>, send: (text: string) => void) => {
    for (const event of events) {
      if (event.data === '[DONE]') {
        done = true; // held back until the reply is stored
        continue;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        send(`${event.raw}\n\n`);
        continue;
      }
      accumulator.add(chunk);
      const shown = clientChunk(chunk as Record<string, unknown>, asked, index);
      if (shown) send(`data: ${JSON.stringify(shown)}\n\n`);
    }
  };
  const finish = async (send: (text: string) => void) => {
    forward(parser.push(decoder.decode()), send);
    forward(parser.flush(), send);
    try {
      const { turn } = replyTurn(call, accumulator.completion(), model, index, performance.now() - started);
      await storeExchange(context.store, call.trajectoryId, exchange, turn);
    } catch (error) {
      context.logError?.(error);
      const message = `edgerl: the reply was not recorded: ${errorMessage(error)}`;
      send(`data: ${JSON.stringify({ error: { message } })}\n\n`);
    }
    if (done) send('data: [DONE]\n\n');
  };
  // Pumped from here rather than pulled by the reader: in workerd a stream's pull runs in the
  // reader's I/O context, where this request's database connection cannot be used. Writes wait for
  // the client (backpressure); a client that goes away fails them, which cancels the upstream call,
  // and nothing is recorded.
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const pending: string[] = [];
  const send = (text: string) => pending.push(text);
  const drain = async () => {
    for (const text of pending.splice(0)) await writer.write(encoder.encode(text));
  };
  void (async () => {
    try {
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        forward(parser.push(decoder.decode(value, { stream: true })), send);
        await drain();
      }
      await finish(send);
      await drain();
      await writer.close();
    } catch (error) {
      await reader.cancel(error).catch(() => {});
      await writer.abort(error).catch(() => {});
    } finally {
      letGo();
    }
  })();
  const body = readable;
  return { status: 200, contentType: 'text/event-stream', body, turnIndex: index, model };
}

/** The request's new messages, the reply and the request's tools: all stored, or none. */
async function storeExchange(
  store: Store,
  trajectoryId: string,
  exchange: Exchange,
  reply: TurnInput,
): Promise<void> {
  const { tools } = exchange;
  const turns = [...exchange.promptTurns, reply];
  // The common call (tools unchanged) is one statement; a changed tool list joins it in a transaction.
  if (!tools) {
    await store.appendTurns(turns);
    return;
  }
  await store.transaction(async (tx) => {
    await tx.appendTurns(turns);
    await tx.setTrajectoryTools({ trajectoryId, tools });
  });
}
