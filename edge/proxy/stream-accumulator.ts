// Folds the chunks of a streamed chat completion (OpenAI's `chat.completion.chunk`, with vLLM's
// `token_ids` and `prompt_token_ids` when asked for) back into the one completion a non-streamed
// call would have returned, so the recording proxy stores a streamed reply exactly like any other.
// Only choice 0 is kept (the proxy refuses n > 1). Pure. It counts the reply's bytes as they come
// (content + tool-call names and arguments, UTF-8), so the proxy can stop a stream past its bound.
import { utf8ByteLength } from '../../protocol/utf8-byte-length.ts';

type Json = Record<string, unknown>;

interface ToolCallParts {
  id: string;
  name: string;
  arguments: string;
}

export class ChatStreamAccumulator {
  #model: string | undefined;
  #content = '';
  #sawContent = false;
  #finishReason: string | null = null;
  readonly #toolCalls: ToolCallParts[] = [];
  readonly #tokenIds: number[] = [];
  #sawTokenIds = false;
  readonly #logprobs: unknown[] = [];
  #sawLogprobs = false;
  #promptTokenIds: unknown;
  #usage: unknown;
  #replyBytes = 0;

  /** The reply's bytes so far: content and tool-call names and arguments, in UTF-8. */
  get replyBytes(): number {
    return this.#replyBytes;
  }

  add(chunk: unknown): void {
    if (!isObject(chunk)) return;
    if (typeof chunk.model === 'string') this.#model ??= chunk.model;
    if (Array.isArray(chunk.prompt_token_ids)) this.#promptTokenIds = chunk.prompt_token_ids;
    if (isObject(chunk.usage)) this.#usage = chunk.usage;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      if (!isObject(choice) || (choice.index ?? 0) !== 0) continue;
      const delta = isObject(choice.delta) ? choice.delta : {};
      if (typeof delta.content === 'string') {
        this.#content += delta.content;
        this.#replyBytes += utf8ByteLength(delta.content);
        if (delta.content !== '') this.#sawContent = true;
      }
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) this.#addToolCall(call);
      if (Array.isArray(choice.token_ids)) {
        this.#sawTokenIds = true;
        for (const id of choice.token_ids) if (typeof id === 'number') this.#tokenIds.push(id);
      }
      if (isObject(choice.logprobs) && Array.isArray(choice.logprobs.content)) {
        this.#sawLogprobs = true;
        this.#logprobs.push(...choice.logprobs.content);
      }
      if (typeof choice.finish_reason === 'string') this.#finishReason = choice.finish_reason;
    }
  }

  /** OpenAI streams a call's id and name once, then its arguments in pieces, keyed by `index`. */
  #addToolCall(call: unknown): void {
    if (!isObject(call)) return;
    const position = typeof call.index === 'number' ? call.index : this.#toolCalls.length;
    // An index far past the calls seen so far is not a call a model made; ignore it.
    if (!Number.isInteger(position) || position < 0 || position > this.#toolCalls.length + 64) return;
    const parts = this.#toolCalls[position] ?? { id: '', name: '', arguments: '' };
    this.#toolCalls[position] = parts;
    if (typeof call.id === 'string' && call.id) parts.id = call.id;
    const fn = isObject(call.function) ? call.function : {};
    if (typeof fn.name === 'string' && fn.name) {
      this.#replyBytes += utf8ByteLength(fn.name) - utf8ByteLength(parts.name);
      parts.name = fn.name;
    }
    if (typeof fn.arguments === 'string') {
      parts.arguments += fn.arguments;
      this.#replyBytes += utf8ByteLength(fn.arguments);
    }
  }

  /** The equivalent non-streamed completion. */
  completion(): Json {
    const toolCalls = this.#toolCalls
      .filter((call) => call !== undefined)
      .map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      }));
    return {
      object: 'chat.completion',
      ...(this.#model !== undefined ? { model: this.#model } : {}),
      ...(this.#promptTokenIds !== undefined ? { prompt_token_ids: this.#promptTokenIds } : {}),
      ...(this.#usage !== undefined ? { usage: this.#usage } : {}),
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: this.#sawContent || toolCalls.length === 0 ? this.#content : null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: this.#finishReason,
          logprobs: this.#sawLogprobs ? { content: this.#logprobs } : null,
          ...(this.#sawTokenIds ? { token_ids: this.#tokenIds } : {}),
        },
      ],
    };
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
