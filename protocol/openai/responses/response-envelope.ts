// What every Responses object edgerl returns shares, streamed or not: the id and the request's
// settings echoed back, the status, usage in the Responses API's names, and ids for output items
// (https://platform.openai.com/docs/api-reference/responses/object). Pure: the caller brings the id
// and the clock.
import type { ResponsesRequest } from './responses-request.ts';

type Json = Record<string, unknown>;

export interface ResponseContext {
  /** `resp_…`; its items' ids are derived from it. */
  readonly id: string;
  /** Unix seconds. */
  readonly createdAt: number;
  readonly request: ResponsesRequest;
  /**
   * The first `message` item's id when the caller names it (the recording proxy's, recorded-item-id.ts,
   * which an `item_reference` can name); a later message item adds `_<position>`. Absent: from `id`.
   */
  readonly messageItemId?: string;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** An output item's id: `msg_…` or `fc_…`, unique within the response. */
export function outputItemId(context: ResponseContext, kind: 'msg' | 'fc', position: number): string {
  if (kind === 'msg' && context.messageItemId !== undefined) {
    return position === 0 ? context.messageItemId : `${context.messageItemId}_${position}`;
  }
  return `${kind}_${context.id.replace(/^resp_/, '')}_${position}`;
}

/** Chat completion usage (`prompt_tokens`, `completion_tokens`) as Responses usage. */
export function responseUsage(usage: unknown): Json | null {
  if (typeof usage !== 'object' || usage === null) return null;
  const { prompt_tokens: input, completion_tokens: output } = usage as Json;
  if (typeof input !== 'number' || typeof output !== 'number') return null;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/** The chat finish reason's place in a Responses object: `length` is an incomplete response. */
export function finishStatus(finishReason: unknown): {
  status: ResponseStatus;
  incomplete_details: { reason: string } | null;
} {
  if (finishReason === 'length')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') {
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  }
  return { status: 'completed', incomplete_details: null };
}

export function responseEnvelope(
  context: ResponseContext,
  fields: { model: string; status: ResponseStatus; output: readonly Json[] } & Json,
): Json {
  const { request } = context;
  return {
    id: context.id,
    object: 'response',
    created_at: context.createdAt,
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    temperature: request.temperature ?? 1,
    top_p: request.top_p ?? 1,
    text: { format: request.text?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    // Nothing is kept for previous_response_id: this says so.
    store: false,
    metadata: {},
    usage: null,
    ...fields,
  };
}
