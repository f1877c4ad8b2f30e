// Text completion bodies and SSE chunks as vLLM returns them: one choice per (prompt, sample), with
// `stop_reason`, and under `return_token_ids` each choice's `prompt_token_ids` and `token_ids` (in a
// stream: the prompt ids on a choice's first chunk, the sampled ids as per-chunk deltas).
import { usage } from './chat-response.ts';
import { completionLogprobs, type TokenNaming } from './logprobs-format.ts';
import type { ChoiceRun, ChoiceUpdate } from './run-choices.ts';
import type { PromptLogprobs } from './prompt-logprobs.ts';
import type { GenerationSettings } from './sampling-fields.ts';

export interface CompletionContext {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  /** Token ids of each prompt, by prompt index. */
  readonly promptIds: readonly (readonly number[])[];
  readonly settings: GenerationSettings;
  readonly naming: TokenNaming;
  /** Under `prompt_logprobs`: each prompt's, by prompt index (vLLM repeats them on each of its choices). */
  readonly promptLogprobs?: readonly PromptLogprobs[];
}

function promptTokens(context: CompletionContext): number {
  return context.promptIds.reduce((sum, ids) => sum + ids.length, 0);
}

export function completionBody(context: CompletionContext, choices: readonly ChoiceRun[]) {
  const { settings } = context;
  return {
    id: context.id,
    object: 'text_completion',
    created: context.created,
    model: context.model,
    choices: choices.map(({ index, promptIndex, output }) => ({
      index,
      text: output.text,
      logprobs: settings.logprobs ? completionLogprobs(output.samples, context.naming, 0) : null,
      finish_reason: output.finishReason,
      stop_reason: output.stopReason,
      prompt_logprobs: context.promptLogprobs?.[promptIndex] ?? null,
      prompt_token_ids: settings.returnTokenIds ? [...(context.promptIds[promptIndex] ?? [])] : null,
      token_ids: settings.returnTokenIds ? [...output.tokenIds] : null,
    })),
    usage: usage(promptTokens(context), choices),
  };
}

export class CompletionChunks {
  /** Per choice, characters of token text reported so far (for `text_offset`), once started. */
  private readonly offsets = new Map<number, number>();

  constructor(
    private readonly context: CompletionContext,
    private readonly choices: readonly ChoiceRun[],
  ) {}

  next(update: ChoiceUpdate): object | undefined {
    const { settings, naming } = this.context;
    const run = this.choices.find((choice) => choice.index === update.index);
    if (!run) throw new Error(`no choice ${update.index} in this stream`);
    const first = !this.offsets.has(update.index);
    const offset = this.offsets.get(update.index) ?? 0;
    const reportsTokens = update.tokens.length > 0 && (settings.logprobs || settings.returnTokenIds);
    if (!update.delta && !reportsTokens && !update.finished && !(first && settings.returnTokenIds))
      return undefined;
    const logprobs = settings.logprobs ? completionLogprobs(update.tokens, naming, offset) : null;
    this.offsets.set(
      update.index,
      offset +
        update.tokens.reduce((sum, token) => sum + naming.tokenizer.decodeToken(token.tokenId).length, 0),
    );
    return {
      id: this.context.id,
      object: 'text_completion',
      created: this.context.created,
      model: this.context.model,
      choices: [
        {
          index: update.index,
          text: update.delta,
          logprobs,
          finish_reason: update.finished ? run.output.finishReason : null,
          stop_reason: update.finished ? run.output.stopReason : null,
          ...(settings.returnTokenIds
            ? {
                ...(first ? { prompt_token_ids: [...(this.context.promptIds[run.promptIndex] ?? [])] } : {}),
                token_ids: update.tokens.map((token) => token.tokenId),
              }
            : {}),
        },
      ],
    };
  }

  usage(): object {
    return {
      id: this.context.id,
      object: 'text_completion',
      created: this.context.created,
      model: this.context.model,
      choices: [],
      usage: usage(promptTokens(this.context), this.choices),
    };
  }
}
