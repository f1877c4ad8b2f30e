// The recording proxy for OpenAI's Responses API (POST /v1/responses): the request is translated to
// the chat completions request that carries the same conversation
// (protocol/openai/responses/to-chat-request.ts) and recorded by recordChatCompletion exactly as a
// chat call (the same owner and key checks, history check, validation, upstream call and turns), then
// its answer is given back in Responses shape: one Responses object, or the chat stream's chunks as
// Responses events. An upstream error passes through as the endpoint sent it. A 400 on a chat
// message names the input item it came from (`input.3`), not the translated message. The reply's
// message item id names the turn it is stored as (recorded-item-id.ts), so a later request may send
// an `item_reference` to it (`@ai-sdk/openai`'s default `store: true`): it is resolved to that turn's
// text before translating (item-references.ts), and the call is then recorded as the inline form.
import { isStoreError } from '../../db/errors.ts';
import { accessRefusal } from '../../db/store.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import {
  findItemReferences,
  type ItemReference,
  type ReferencedTurn,
  resolveItemReferences,
} from '../../protocol/openai/responses/item-references.ts';
import { recordedItemId } from '../../protocol/openai/responses/recorded-item-id.ts';
import type { ResponseContext } from '../../protocol/openai/responses/response-envelope.ts';
import { ResponseEventStream } from '../../protocol/openai/responses/response-event-stream.ts';
import { renameInMessage, responsesField } from '../../protocol/openai/responses/responses-field.ts';
import type { ResponsesRequest } from '../../protocol/openai/responses/responses-request.ts';
import { toChatRequest } from '../../protocol/openai/responses/to-chat-request.ts';
import { toResponseObject } from '../../protocol/openai/responses/to-response-object.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import { parseValue } from '../http/parse-body.ts';
import { proxyRequestSchema } from './proxy-request.ts';
import {
  type ProxyCall,
  type ProxyContext,
  type ProxyResult,
  recordChatCompletion,
} from './record-chat-completion.ts';
import { SseParser } from './sse-parser.ts';

export interface ResponsesCall extends Omit<ProxyCall, 'request'> {
  readonly request: ResponsesRequest;
}

export async function recordResponse(context: ProxyContext, call: ResponsesCall): Promise<ProxyResult> {
  const translated = toChatRequest(await withReferencesResolved(context, call));
  if (!translated.ok) throw invalidField(translated.field, translated.message);
  const { sources } = translated;
  let result: ProxyResult;
  try {
    const request = parseValue(proxyRequestSchema, translated.body, 'body');
    result = await recordChatCompletion(context, { ...call, request });
  } catch (error) {
    throw renamed(error, sources);
  }
  if (result.status < 200 || result.status >= 300) return renamedUpstreamError(result, sources);
  const response: ResponseContext = {
    id: `resp_${crypto.randomUUID().replaceAll('-', '')}`,
    createdAt: Math.floor(Date.now() / 1000),
    request: call.request,
    ...(result.turnIndex !== undefined
      ? { messageItemId: recordedItemId(call.trajectoryId, result.turnIndex) }
      : {}),
  };
  if (typeof result.body === 'string') {
    const completion = JSON.parse(result.body) as Record<string, unknown>;
    return { ...result, body: JSON.stringify(toResponseObject(completion, response)) };
  }
  return { ...result, body: result.body.pipeThrough(responseEvents(response)) };
}

/**
 * The request with its item references replaced by the text of the turns they name, read in one
 * query (per 10,000 turns) of the turns from the first named to the last. A refusal is a 400 on `input.N.id`, unless the
 * call may not write the trajectory at all (no key, the wrong key, another writer's): then that refusal,
 * as recordChatCompletion would give it, so nothing of the stored turns is told to a caller without
 * its key. A resolved request goes on to recordChatCompletion, which checks the key before anything.
 */
async function withReferencesResolved(context: ProxyContext, call: ResponsesCall): Promise<ResponsesRequest> {
  const found = findItemReferences(call.request, call.trajectoryId);
  if (!found.ok) throw await refusal(context, call, found);
  if (found.references.length === 0) return call.request;
  const turns = await referencedTurns(context, call.trajectoryId, found.references);
  const resolved = resolveItemReferences(call.request, found.references, turns);
  if (!resolved.ok) throw await refusal(context, call, resolved);
  return resolved.request;
}

/** The stored turns from the first one named to the last, in pages of turnsAfter's largest. */
async function referencedTurns(
  context: ProxyContext,
  trajectoryId: string,
  references: readonly ItemReference[],
): Promise<ReferencedTurn[]> {
  const indices = references.map((reference) => reference.turnIndex);
  const last = Math.max(...indices);
  const turns: ReferencedTurn[] = [];
  let after = Math.min(...indices) - 1;
  while (after < last) {
    const limit = Math.min(10_000, last - after);
    const page = (await stored(context.store.turnsAfter({ trajectoryId, afterIndex: after, limit }))).turns;
    turns.push(...page);
    const end = page.at(-1);
    // Turn indices run from 0 without gaps: a short page is the trajectory's end.
    if (!end || page.length < limit) break;
    after = end.index;
  }
  return turns;
}

/** The 400 on the reference, or the refusal the call's key gets when it may not write the trajectory. */
async function refusal(
  context: ProxyContext,
  call: ResponsesCall,
  refused: { readonly field: string; readonly message: string },
): Promise<Error> {
  const head = await stored(context.store.getTrajectoryHead(call.trajectoryId));
  const access = accessRefusal(
    { writer: head.trajectory.writer, keyDigest: head.keyDigest },
    { writer: 'client', ...(call.keyDigest !== undefined ? { keyDigest: call.keyDigest } : {}) },
    call.trajectoryId,
  );
  return access ?? invalidField(refused.field, refused.message);
}

/** A store read, with an id the store will not take named as the header readAndCheck names. */
function stored<T>(read: Promise<T>): Promise<T> {
  return read.catch((error: unknown) => {
    if (isStoreError(error, 'validation')) {
      throw invalidField('x-edgerl-trajectory', 'must be a trajectory id (a uuid)');
    }
    throw error;
  });
}

/** A 400 on a field of the translated chat request, renamed to the field the client sent. */
function renamed(error: unknown, sources: readonly string[]): unknown {
  if (!(error instanceof ApiError) || error.field === undefined) return error;
  const field = responsesField(error.field, sources);
  if (field === undefined) return error;
  return new ApiError(error.code, renameInMessage(error.message, sources), {
    field,
    cause: error,
  });
}

/**
 * The upstream's refusal of the chat request (vLLM's `{error: {message, param}}`), its field and message
 * renamed to what the client sent; any other body passes as it came.
 */
function renamedUpstreamError(result: ProxyResult, sources: readonly string[]): ProxyResult {
  if (typeof result.body !== 'string') return result;
  let body: { error?: { message?: unknown; param?: unknown } };
  try {
    body = JSON.parse(result.body) as typeof body;
  } catch {
    return result;
  }
  const error = body.error;
  if (typeof error !== 'object' || error === null) return result;
  const param = typeof error.param === 'string' ? responsesField(error.param, sources) : undefined;
  const message = typeof error.message === 'string' ? renameInMessage(error.message, sources) : undefined;
  const renamedError = { ...error, ...(param ? { param } : {}), ...(message ? { message } : {}) };
  return { ...result, body: JSON.stringify({ ...body, error: renamedError }) };
}

/**
 * The proxy's chat stream (stored at its end, before `[DONE]`) as Responses events: the terminal
 * event goes out at `[DONE]`, so a client that saw `response.completed` knows the turn is stored;
 * an error chunk (a reply not recorded) makes it `response.failed`.
 */
function responseEvents(context: ResponseContext): TransformStream<Uint8Array, Uint8Array> {
  const events = new ResponseEventStream(context);
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const write = (
    controller: TransformStreamDefaultController<Uint8Array>,
    list: readonly { type: string }[],
  ) => {
    for (const event of list) {
      controller.enqueue(encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`));
    }
  };
  const forward = (controller: TransformStreamDefaultController<Uint8Array>, text: string, end: boolean) => {
    const parsed = [...parser.push(text), ...(end ? parser.flush() : [])];
    for (const event of parsed) {
      if (event.data === '[DONE]') {
        write(controller, events.finish());
        continue;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch (error) {
        chunk = {
          error: { message: `the inference stream sent an event that is not JSON: ${errorMessage(error)}` },
        };
      }
      write(controller, events.push(chunk));
    }
    if (end) write(controller, events.finish());
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    start: (controller) => write(controller, events.start()),
    transform: (bytes, controller) => forward(controller, decoder.decode(bytes, { stream: true }), false),
    flush: (controller) => forward(controller, decoder.decode(), true),
  });
}
