// Chat completion chunks as the server-sent events of a streamed POST /v1/responses
// (https://platform.openai.com/docs/api-reference/responses-streaming): `response.created` and
// `response.in_progress`, then per output item `response.output_item.added`, its deltas
// (`response.output_text.delta` under a `content_part`, `response.function_call_arguments.delta`),
// its `….done` events and `response.output_item.done`, and last `response.completed` (or
// `response.incomplete` after a `length` finish, `response.failed` after an error chunk) with the
// whole response and its usage. One item is open at a time: text, then each tool call in turn, as
// OpenAI and vLLM stream them. Only choice 0 is read. Pure and stateful: the caller feeds chunks and
// writes the events out (as `event: <type>` / `data: <json>`).
import { functionCallItem, logprobsOf, messageItem, outputText } from './output-items.ts';
import {
  finishStatus,
  outputItemId,
  type ResponseContext,
  type ResponseStatus,
  responseEnvelope,
  responseUsage,
} from './response-envelope.ts';

type Json = Record<string, unknown>;

/** One event: `type` is also its SSE event name. */
export type ResponseEvent = Json & { readonly type: string; readonly sequence_number: number };

type OpenItem =
  | { kind: 'message'; position: number; id: string; text: string }
  | {
      kind: 'call';
      position: number;
      id: string;
      chatIndex: number;
      callId: string;
      name: string;
      args: string;
    };

export class ResponseEventStream {
  #sequence = 0;
  #model: string;
  #open: OpenItem | undefined;
  readonly #output: Json[] = [];
  #messages = 0;
  #calls = 0;
  #finishReason: unknown = null;
  #usage: unknown;
  #promptTokenIds: unknown;
  readonly #tokenIds: number[] = [];
  #sawTokenIds = false;
  readonly #logprobs: Json[] = [];
  #sawLogprobs = false;
  #failure: string | undefined;
  #finished = false;

  constructor(private readonly context: ResponseContext) {
    this.#model = context.request.model ?? '';
  }

  /** The events that open the stream. */
  start(): ResponseEvent[] {
    const response = this.#response('in_progress', []);
    return [this.#event('response.created', { response }), this.#event('response.in_progress', { response })];
  }

  /** The events one chat completion chunk makes (an error chunk, `{"error": …}`, fails the response). */
  push(chunk: unknown): ResponseEvent[] {
    if (!isObject(chunk) || this.#finished) return [];
    if (isObject(chunk.error) && !Array.isArray(chunk.choices)) {
      this.#failure = typeof chunk.error.message === 'string' ? chunk.error.message : 'the stream failed';
      return [];
    }
    if (typeof chunk.model === 'string' && chunk.model) this.#model = chunk.model;
    if (Array.isArray(chunk.prompt_token_ids)) this.#promptTokenIds = chunk.prompt_token_ids;
    if (isObject(chunk.usage)) this.#usage = chunk.usage;
    const events: ResponseEvent[] = [];
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      if (!isObject(choice) || (choice.index ?? 0) !== 0) continue;
      const delta = isObject(choice.delta) ? choice.delta : {};
      const logprobs = logprobsOf(choice.logprobs);
      if (logprobs) {
        this.#sawLogprobs = true;
        this.#logprobs.push(...logprobs);
      }
      if (Array.isArray(choice.token_ids)) {
        this.#sawTokenIds = true;
        for (const id of choice.token_ids) if (typeof id === 'number') this.#tokenIds.push(id);
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        events.push(...this.#text(delta.content, logprobs));
      }
      if (Array.isArray(delta.tool_calls)) {
        delta.tool_calls.forEach((call: unknown, position: number) => {
          events.push(...this.#toolCall(call, position));
        });
      }
      if (typeof choice.finish_reason === 'string') this.#finishReason = choice.finish_reason;
    }
    return events;
  }

  /** The closing events: open items done, then the terminal event with the whole response. */
  finish(): ResponseEvent[] {
    if (this.#finished) return [];
    this.#finished = true;
    const events = this.#close();
    if (this.#output.length === 0 && this.#failure === undefined) {
      // A reply of nothing at all is an empty message, as the non-streamed response has.
      events.push(...this.#openMessage(), ...this.#close());
    }
    const extras: Json = {
      usage: responseUsage(this.#usage),
      ...(Array.isArray(this.#promptTokenIds) ? { prompt_token_ids: this.#promptTokenIds } : {}),
      ...(this.#sawTokenIds ? { token_ids: this.#tokenIds } : {}),
    };
    if (this.#failure !== undefined) {
      const response = this.#response('failed', this.#output, {
        ...extras,
        error: { code: 'server_error', message: this.#failure },
      });
      events.push(this.#event('response.failed', { response }));
      return events;
    }
    const { status, incomplete_details } = finishStatus(this.#finishReason);
    const response = this.#response(status, this.#output, { ...extras, incomplete_details });
    events.push(this.#event(`response.${status}`, { response }));
    return events;
  }

  #text(text: string, logprobs: Json[] | undefined): ResponseEvent[] {
    const events = this.#open?.kind === 'message' ? [] : [...this.#close(), ...this.#openMessage()];
    const open = this.#open as Extract<OpenItem, { kind: 'message' }>;
    open.text += text;
    events.push(
      this.#event('response.output_text.delta', {
        item_id: open.id,
        output_index: open.position,
        content_index: 0,
        delta: text,
        logprobs: logprobs ?? [],
      }),
    );
    return events;
  }

  #openMessage(): ResponseEvent[] {
    const open: OpenItem = {
      kind: 'message',
      position: this.#output.length,
      id: outputItemId(this.context, 'msg', this.#messages++),
      text: '',
    };
    this.#open = open;
    return [
      this.#event('response.output_item.added', {
        output_index: open.position,
        item: messageItem(open.id, '', undefined, 'in_progress'),
      }),
      this.#event('response.content_part.added', {
        item_id: open.id,
        output_index: open.position,
        content_index: 0,
        part: outputText('', undefined),
      }),
    ];
  }

  /** OpenAI streams a call's id and name once, then its arguments in pieces, keyed by `index`. */
  #toolCall(call: unknown, position: number): ResponseEvent[] {
    if (!isObject(call)) return [];
    const chatIndex = typeof call.index === 'number' ? call.index : position;
    const fn = isObject(call.function) ? call.function : {};
    const args = typeof fn.arguments === 'string' ? fn.arguments : '';
    const events: ResponseEvent[] = [];
    let open = this.#open;
    if (open?.kind !== 'call' || open.chatIndex !== chatIndex) {
      events.push(...this.#close());
      open = {
        kind: 'call',
        position: this.#output.length,
        id: outputItemId(this.context, 'fc', this.#calls++),
        chatIndex,
        callId: typeof call.id === 'string' ? call.id : '',
        name: typeof fn.name === 'string' ? fn.name : '',
        args: '',
      };
      this.#open = open;
      events.push(
        this.#event('response.output_item.added', {
          output_index: open.position,
          item: functionCallItem(open.id, open.callId, open.name, '', 'in_progress'),
        }),
      );
    }
    if (args !== '') {
      open.args += args;
      events.push(
        this.#event('response.function_call_arguments.delta', {
          item_id: open.id,
          output_index: open.position,
          delta: args,
        }),
      );
    }
    return events;
  }

  /** The done events of the open item, which joins the output. */
  #close(): ResponseEvent[] {
    const open = this.#open;
    this.#open = undefined;
    if (!open) return [];
    if (open.kind === 'message') {
      const logprobs = this.#sawLogprobs ? this.#logprobs : undefined;
      const item = messageItem(open.id, open.text, logprobs, 'completed');
      this.#output.push(item);
      const at = { item_id: open.id, output_index: open.position, content_index: 0 };
      return [
        this.#event('response.output_text.done', { ...at, text: open.text, logprobs: logprobs ?? [] }),
        this.#event('response.content_part.done', { ...at, part: outputText(open.text, logprobs) }),
        this.#event('response.output_item.done', { output_index: open.position, item }),
      ];
    }
    const item = functionCallItem(open.id, open.callId, open.name, open.args, 'completed');
    this.#output.push(item);
    return [
      this.#event('response.function_call_arguments.done', {
        item_id: open.id,
        output_index: open.position,
        name: open.name,
        arguments: open.args,
      }),
      this.#event('response.output_item.done', { output_index: open.position, item }),
    ];
  }

  #response(status: ResponseStatus, output: readonly Json[], extra: Json = {}): Json {
    return responseEnvelope(this.context, { model: this.#model, status, output: [...output], ...extra });
  }

  #event(type: string, fields: Json): ResponseEvent {
    return { type, sequence_number: this.#sequence++, ...fields };
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
