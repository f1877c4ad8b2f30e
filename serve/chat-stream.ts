// Chat completion chunks for SSE, as vLLM streams them: first one chunk per choice with the role
// (the very first also carries `prompt_token_ids` under `return_token_ids`), then one chunk per
// sampled token with the content it made final, its logprobs and its id (`token_ids` deltas), and
// `finish_reason`/`stop_reason` on the choice's last chunk. With tools, text inside a `<tool_call>`
// is held back and each call goes out whole, once closed, as a `tool_calls` delta; the content deltas
// add up to exactly the unstreamed message's content (streamedContent below).
import { toolCallStreamState } from '../model/tokenizer/index.ts';
import { type ChatResponseContext, chatFinishReason, toolCallSalt, usage } from './chat-response.ts';
import { chatLogprobs } from './logprobs-format.ts';
import type { ChoiceRun, ChoiceUpdate } from './run-choices.ts';

interface Sent {
  text: string;
  content: number;
  calls: number;
}

export class ChatChunks {
  private readonly sent = new Map<number, Sent>();

  constructor(
    private readonly context: ChatResponseContext,
    private readonly choices: readonly ChoiceRun[],
  ) {}

  private chunk(choice: Record<string, unknown> | null, extra: Record<string, unknown> = {}) {
    return {
      id: this.context.id,
      object: 'chat.completion.chunk',
      created: this.context.created,
      model: this.context.model,
      choices: choice ? [choice] : [],
      ...extra,
    };
  }

  /** The role chunks that open the stream, one per choice. */
  opening(): object[] {
    const { settings, promptIds } = this.context;
    return this.choices.map(({ index }, position) =>
      this.chunk(
        { index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
        position === 0 && settings.returnTokenIds ? { prompt_token_ids: [...promptIds] } : {},
      ),
    );
  }

  /** The chunk for one update, or undefined when it has nothing to tell. */
  next(update: ChoiceUpdate): object | undefined {
    const { settings, toolsActive, naming } = this.context;
    const run = this.choices.find((choice) => choice.index === update.index);
    if (!run) throw new Error(`no choice ${update.index} in this stream`);
    const sent = this.sent.get(update.index) ?? { text: '', content: 0, calls: 0 };
    this.sent.set(update.index, sent);
    sent.text += update.delta;
    const delta: Record<string, unknown> = {};
    if (toolsActive) {
      const state = toolCallStreamState(sent.text, {
        idSalt: toolCallSalt(this.context, update.index),
        complete: update.finished,
      });
      const final = streamedContent(state.streamableContent, state.toolCalls.length > 0, update.finished);
      const content = final.slice(sent.content);
      if (content) delta.content = content;
      sent.content = final.length;
      const calls = state.toolCalls.slice(sent.calls, this.context.parallelToolCalls ? undefined : 1);
      if (calls.length > 0) {
        delta.tool_calls = calls.map((call, offset) => ({ index: sent.calls + offset, ...call }));
        sent.calls += calls.length;
      }
    } else if (update.delta) {
      delta.content = update.delta;
    }
    const reportsTokens = update.tokens.length > 0 && (settings.logprobs || settings.returnTokenIds);
    if (Object.keys(delta).length === 0 && !reportsTokens && !update.finished) return undefined;
    const output = run.output;
    return this.chunk({
      index: update.index,
      delta,
      logprobs: settings.logprobs ? { content: chatLogprobs(update.tokens, naming) } : null,
      finish_reason: update.finished ? chatFinishReason(this.context, sent.calls, output.finishReason) : null,
      ...(update.finished ? { stop_reason: output.stopReason } : {}),
      ...(settings.returnTokenIds ? { token_ids: update.tokens.map((token) => token.tokenId) } : {}),
    });
  }

  /** `stream_options.include_usage`: a last chunk with no choices and the usage. */
  usage(): object {
    return this.chunk(null, { usage: usage(this.context.promptIds.length, this.choices) });
  }
}

/**
 * The part of the content that is final whatever comes next. The unstreamed body (chat-response.ts)
 * returns the text untouched when no call parsed and the text outside calls trimmed when one did, so
 * whitespace between or after calls (the "\n" that separates parallel calls) is never content, as in
 * vLLM's unstreamed hermes parse (content is the text before the first call, hermes_tool_parser.py
 * `extract_tool_calls`). Until a call is seen either may still happen: trailing whitespace waits
 * for text after it, and an output that opens with whitespace waits for the first call or the end.
 */
function streamedContent(outside: string, hasCalls: boolean, finished: boolean): string {
  if (hasCalls) return outside.trim();
  if (finished) return outside;
  if (outside.trimStart() !== outside) return '';
  return outside.trimEnd();
}
