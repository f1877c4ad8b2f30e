// The recording proxy: forwards one chat completions request to the inference endpoint and records
// the exchange as turns of the trajectory the client names. Only what the upstream accepted is
// stored: the request's new messages and the reply (with its token ids and logprobs when the
// endpoint returns them) are appended together, in one statement, after a 2xx reply parses.
// Streamed calls pass the events through as they come and record the exchange when the stream ends
// (before the final `[DONE]`, so a client that saw it knows the turn is stored). An upstream error
// (a status, no answer, a body that is no completion) passes through and stores nothing, so the
// client may retry with the same or a different prompt. The request's history is checked against the
// digest of the last stored turn (check-history.ts), so a call does not read the turns stored before;
// and with the edge's head of the trajectory from its call before (trajectory-heads.ts) it reads
// nothing at all: the one append statement checks the head it assumed and stores the exchange
// (Store.appendConversation), so a call continuing a conversation is one store round trip.
import { isStoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import { proxyModel } from '../routing/proxy-model.ts';
import type { RouteCache } from '../routing/route-cache.ts';
import { type HeadView, headForCall, readAndCheck } from './head-for-call.ts';
import { historyOrderIssue, type NewMessages } from './new-messages.ts';
import type { TrajectoryHeads } from './trajectory-heads.ts';
import { type ClientAsked, clientChunk, clientResponse } from './client-response.ts';
import { promptTurn, replyTurn } from './proxy-turns.ts';
import { requestTools } from './request-tools.ts';
import { type ProxyRequest, toChatMessage } from './proxy-request.ts';
import { SseParser } from './sse-parser.ts';
import { ChatStreamAccumulator } from './stream-accumulator.ts';
import { callUpstream, openUpstream, replyLimits, type UpstreamEndpoint } from './upstream.ts';
import { utf8ByteLength } from '../../protocol/utf8-byte-length.ts';

export interface ProxyContext {
  readonly store: Store;
  readonly upstream: UpstreamEndpoint;
  /** Where a failure to record a streamed reply is reported (the client sees an error event too). */
  readonly logError?: (error: unknown) => void;
  /** Keeps the store open while a streamed reply is still being read (see with-store.ts). */
  readonly keepStore?: () => () => void;
  /** The edge's heads of the trajectories it proxies; absent: every call reads the head first. */
  readonly heads?: TrajectoryHeads;
  /** The edge's route table; absent: a policy or model name is looked up on every call. */
  readonly routes?: RouteCache;
}

export interface ProxyCall {
  readonly trajectoryId: string;
  /** The digest of the trajectory key the client presented (protocol/trajectory-key.ts); absent: the id alone. */
  readonly keyDigest?: string;
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
  readonly view: HeadView;
  readonly messages: readonly ChatMessage[];
  readonly model: string;
  readonly upstreamBody: Record<string, unknown>;
  /** The request's messages the trajectory does not hold yet, stored with the reply. */
  readonly promptTurns: readonly TurnInput[];
  /** The request's tools when they differ from the stored list. */
  readonly tools: ToolSpec[] | undefined;
  /** The request's `tools` as sent, compared again if the stored list turns out to differ from the view's. */
  readonly requestedTools: unknown;
  readonly asked: ClientAsked;
}

export async function recordChatCompletion(context: ProxyContext, call: ProxyCall): Promise<ProxyResult> {
  const exchange = await begin(context, call);
  return call.request.stream ? recordStream(context, call, exchange) : recordWhole(context, call, exchange);
}

async function begin(context: ProxyContext, call: ProxyCall): Promise<Exchange> {
  const { store } = context;
  const { request, trajectoryId } = call;
  const messages = request.messages.map(toChatMessage);
  const { view, fresh } = await headForCall(store, context.heads, trajectoryId, messages, call.keyDigest);
  // After the history check: a rewritten conversation is a conflict whatever its order.
  const disordered = historyOrderIssue(messages);
  if (disordered) throw invalidField(disordered.field, disordered.message);
  const model = await proxyModel(
    store,
    view.route,
    { ...(call.policy !== undefined ? { policy: call.policy } : {}), requested: request.model },
    context.routes,
  );
  const upstreamBody: Record<string, unknown> = {
    ...request,
    model,
    logprobs: true,
    ...(context.upstream.requestTokenIds ? { return_token_ids: true } : {}),
  };
  return {
    view,
    messages,
    model,
    upstreamBody,
    promptTurns: promptTurnsOf(trajectoryId, fresh),
    tools: requestTools(request.tools, view.tools),
    requestedTools: request.tools,
    asked: { logprobs: request.logprobs === true, tokenIds: request.return_token_ids === true },
  };
}

function promptTurnsOf(trajectoryId: string, fresh: Extract<NewMessages, { ok: true }>): TurnInput[] {
  return fresh.messages.map((message, offset) =>
    promptTurn(trajectoryId, fresh.firstIndex + offset, message),
  );
}

async function recordWhole(context: ProxyContext, call: ProxyCall, exchange: Exchange): Promise<ProxyResult> {
  const { model } = exchange;
  const upstream = await callUpstream(context.upstream, exchange.upstreamBody, call.signal);
  const limits = replyLimits(context.upstream);
  if (upstream.overflow) {
    const reason = `reply-too-large: the inference response passed ${upstream.overflow.maxBytes} bytes (32 × EDGERL_EPISODE_MAX_REPLY_BYTES) and was cancelled; not stored`;
    throw await endTooLarge(context, call, reason);
  }
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
  const { turn, toolCallIds } = replyTurn(call, json, model, index, upstream.latencyMs, upstream.replica);
  const bytes = turnReplyBytes(turn);
  if (bytes > limits.maxReplyBytes) {
    const reason = `reply-too-large: the reply is ${bytes} bytes (content and tool-call arguments), over the bound of ${limits.maxReplyBytes} (EDGERL_EPISODE_MAX_REPLY_BYTES); not stored`;
    throw await endTooLarge(context, call, reason);
  }
  await storeExchange(context, call, exchange, turn);
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
  const { response, release, replica } = await openUpstream(context.upstream, upstreamBody, call.signal);
  if (!response.ok || !response.body) {
    const text = await response.text().finally(release);
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
  const limits = replyLimits(context.upstream);
  let bodyBytes = 0;
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
      const { turn } = replyTurn(
        call,
        accumulator.completion(),
        model,
        index,
        performance.now() - started,
        replica,
      );
      await storeExchange(context, call, exchange, turn);
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
      let tooLarge: string | undefined;
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        bodyBytes += value.byteLength;
        forward(parser.push(decoder.decode(value, { stream: true })), send);
        await drain();
        // Past either bound the upstream is cancelled at once: the edge holds at most one bound's worth.
        tooLarge =
          accumulator.replyBytes > limits.maxReplyBytes
            ? `reply-too-large: the streamed reply passed ${limits.maxReplyBytes} bytes of content and tool-call arguments (EDGERL_EPISODE_MAX_REPLY_BYTES); stopped, not stored`
            : bodyBytes > limits.maxBodyBytes
              ? `reply-too-large: the stream passed ${limits.maxBodyBytes} bytes (32 × EDGERL_EPISODE_MAX_REPLY_BYTES); stopped, not stored`
              : undefined;
        if (tooLarge) break;
      }
      if (tooLarge) {
        await reader.cancel(new Error(tooLarge)).catch(() => {});
        const ended = await endTooLarge(context, call, tooLarge);
        send(`data: ${JSON.stringify({ error: { message: `edgerl: ${ended.message}` } })}\n\n`);
        await drain();
        await writer.close();
        return;
      }
      await finish(send);
      await drain();
      await writer.close();
    } catch (error) {
      await reader.cancel(error).catch(() => {});
      await writer.abort(error).catch(() => {});
    } finally {
      release();
      letGo();
    }
  })();
  const body = readable;
  return { status: 200, contentType: 'text/event-stream', body, turnIndex: index, model };
}

/** The reply's stored text in bytes: content and tool-call names and arguments (as the episode loop's bound). */
function turnReplyBytes(turn: TurnInput): number {
  let bytes = utf8ByteLength(turn.content ?? '');
  for (const toolCall of turn.toolCalls ?? [])
    bytes += utf8ByteLength(toolCall.function.name) + utf8ByteLength(toolCall.function.arguments);
  return bytes;
}

/**
 * A reply past the bound: nothing of the exchange is stored, and the trajectory ends `error` with the
 * reason (as an episode the loop runs would), so its group does not wait on it. Returns the error the
 * client gets (502: the endpoint answered something the edge will not keep).
 */
async function endTooLarge(context: ProxyContext, call: ProxyCall, reason: string): Promise<ApiError> {
  context.heads?.delete(call.trajectoryId);
  await context.store
    .finishTrajectory({
      trajectoryId: call.trajectoryId,
      status: 'error',
      errorReason: reason,
      ...(call.keyDigest !== undefined ? { keyDigest: call.keyDigest } : {}),
    })
    .catch((error: unknown) => context.logError?.(error));
  return new ApiError('bad-gateway', `inference endpoint: ${reason}`);
}

/**
 * The request's new messages, the reply and the request's tools: all stored, or none; then the edge's
 * head of the trajectory is the one this call leaves.
 */
async function storeExchange(
  context: ProxyContext,
  call: ProxyCall,
  exchange: Exchange,
  reply: TurnInput,
): Promise<void> {
  const { store, heads } = context;
  const { trajectoryId, keyDigest } = call;
  try {
    const head = await appendExchange(store, call, exchange, reply);
    if (head) heads?.set(trajectoryId, head);
  } catch (error) {
    heads?.delete(trajectoryId);
    if (!isStoreError(error, 'history-mismatch')) throw error;
    // The view was stale (another edge stored turns that differ from this request's), or the stored
    // state moved on under it: check the request against the stored state now, as a call without a
    // view would have, and store it if that allows.
    const { view, fresh } = await readAndCheck(store, trajectoryId, exchange.messages, keyDigest);
    const retried: Exchange = {
      ...exchange,
      view,
      promptTurns: promptTurnsOf(trajectoryId, fresh),
      tools: requestTools(exchange.requestedTools, view.tools),
    };
    const head = await appendExchange(store, call, retried, reply);
    if (head) heads?.set(trajectoryId, head);
  }
}

/** Stores the exchange; the head it leaves, or undefined when the trajectory keeps no digests. */
async function appendExchange(
  store: Store,
  call: ProxyCall,
  exchange: Exchange,
  reply: TurnInput,
): Promise<(HeadView & { historyDigest: string }) | undefined> {
  const { trajectoryId, keyDigest } = call;
  const key = keyDigest !== undefined ? { keyDigest } : undefined;
  const { tools, view } = exchange;
  const turns = [...exchange.promptTurns, reply];
  if (view.historyDigest === null) {
    // Turns stored before the digest: the history was compared turn by turn, and the append is the
    // plain one (its digests stay null). A changed tool list joins it in a transaction.
    if (!tools) {
      await store.appendTurns(turns, key);
      return undefined;
    }
    await store.transaction(async (tx) => {
      await tx.appendTurns(turns, key);
      await tx.setTrajectoryTools({ trajectoryId, tools });
    });
    return undefined;
  }
  // One statement: checks the stored count and digest against the view, stores the turns the
  // trajectory does not hold yet, and the tool list when it changed.
  const appended = await store.appendConversation({
    turns,
    previousDigest: view.historyDigest,
    ...(tools ? { tools } : {}),
    ...key,
  });
  let stored = tools ?? view.tools;
  if (appended.storedTools !== undefined) {
    // Another edge stored some of the turns: the list compared was stale, so compare the stored one.
    const replacement = requestTools(exchange.requestedTools, appended.storedTools);
    if (replacement) await store.setTrajectoryTools({ trajectoryId, tools: replacement });
    stored = replacement ?? appended.storedTools;
  }
  return {
    turnCount: reply.index + 1,
    historyDigest: appended.historyDigest,
    tools: stored,
    route: view.route,
    keyDigest: view.keyDigest,
  };
}
