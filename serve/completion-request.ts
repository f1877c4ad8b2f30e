// The body of POST /v1/completions as vLLM accepts it: `prompt` is a string, a list of token ids, or
// a list of either (one choice group per prompt); `logprobs` is the number of alternatives per token;
// `max_tokens` defaults to 16 (OpenAI's and vLLM's CompletionRequest). Leaves out echo and suffix.
import { z } from 'zod';
import { formatIssues } from '../protocol/format-issues.ts';
import { type GenerationSettings, resolveSettings, samplingFields } from './sampling-fields.ts';
import { ServeError } from './serve-error.ts';

const tokenIds = z.array(z.number().int().min(0)).min(1);

export const completionRequestSchema = z.object({
  ...samplingFields,
  prompt: z.union([z.string().min(1), tokenIds, z.array(z.union([z.string().min(1), tokenIds])).min(1)]),
  max_tokens: z.number().int().min(1).nullish(),
  logprobs: z.number().int().min(0).nullish(),
  /**
   * vLLM's extension: per prompt token, its logprob and those of the `prompt_logprobs` most likely
   * tokens there (prompt-logprobs.ts); refused with a stream, as vLLM refuses it.
   */
  prompt_logprobs: z.number().int().min(0).max(20).nullish(),
  /** vLLM: whether the tokenizer adds special tokens (e.g. BOS) to string prompts. */
  add_special_tokens: z.boolean().nullish(),
  suffix: z
    .string()
    .nullish()
    .refine((value) => !value, { message: 'is not supported by edgerl serve-model' }),
});

/** A prompt as given: text to tokenize, or token ids used as they are. */
export type CompletionPrompt = { readonly text: string } | { readonly ids: readonly number[] };

export interface CompletionRequest {
  readonly model: string | undefined;
  readonly prompts: readonly CompletionPrompt[];
  readonly maxTokens: number;
  readonly addSpecialTokens: boolean;
  /** Alternatives per prompt token under `prompt_logprobs`; undefined when not asked for. */
  readonly promptLogprobs: number | undefined;
  readonly settings: GenerationSettings;
}

/** vLLM's and OpenAI's default for /v1/completions. */
export const defaultCompletionMaxTokens = 16;

export function parseCompletionRequest(body: unknown, vocabSize: number): CompletionRequest {
  const parsed = completionRequestSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new ServeError('bad-request', formatIssues(parsed.error), first?.path.join('.') || null);
  }
  const request = parsed.data;
  if (request.prompt_logprobs != null && request.stream) {
    throw new ServeError('bad-request', 'Prompt_logprobs are not available when stream is enabled', 'stream');
  }
  const raw = request.prompt;
  const list: (string | number[])[] =
    typeof raw === 'string' || typeof raw[0] === 'number'
      ? [raw as string | number[]]
      : (raw as (string | number[])[]);
  const prompts = list.map(
    (item): CompletionPrompt => (typeof item === 'string' ? { text: item } : { ids: item }),
  );
  return {
    model: request.model ?? undefined,
    prompts,
    maxTokens: request.max_tokens ?? defaultCompletionMaxTokens,
    addSpecialTokens: request.add_special_tokens ?? true,
    promptLogprobs: request.prompt_logprobs ?? undefined,
    settings: resolveSettings(
      request,
      { enabled: request.logprobs != null, top: request.logprobs ?? 0 },
      vocabSize,
    ),
  };
}
