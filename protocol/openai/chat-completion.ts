// A non-streamed chat completions response, as edgerl's readers use it: the first choice's message
// (content, refusal, tool calls), finish reason and usage, plus vLLM's token ids (`return_token_ids`,
// vLLM >= 0.10.2) and the sampled logprobs. Fields nobody reads are not described (zod drops them).
import { z } from 'zod';
import { formatIssues } from '../format-issues.ts';

const tokenIds = z.array(z.number().int().nonnegative());
const tokenCount = z.number().int().nonnegative();

export const completionUsageSchema = z.object({
  prompt_tokens: tokenCount.nullish(),
  completion_tokens: tokenCount.nullish(),
});

export const completionToolCallSchema = z.object({
  id: z.string().nullish(),
  function: z.object({
    name: z.string().nullish(),
    /** JSON text as OpenAI sends it; some servers send the parsed object instead. */
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  }),
});

export const completionChoiceSchema = z.object({
  finish_reason: z.string().nullish(),
  /** vLLM: the sampled ids of this choice. */
  token_ids: tokenIds.nullish(),
  /** With `logprobs: true`: one entry per sampled token. */
  logprobs: z.object({ content: z.array(z.object({ logprob: z.number() })).nullish() }).nullish(),
  message: z.object({
    content: z.string().nullish(),
    /** OpenAI: set instead of content when the model declines (structured outputs). */
    refusal: z.string().nullish(),
    tool_calls: z.array(completionToolCallSchema).nullish(),
  }),
});

export const chatCompletionSchema = z.object({
  /** The model that answered; some servers omit it. */
  model: z.string().optional(),
  /** vLLM: the prompt as the server tokenized it. */
  prompt_token_ids: tokenIds.nullish(),
  usage: completionUsageSchema.nullish(),
  choices: z.array(completionChoiceSchema).min(1),
});
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;
export type CompletionChoice = ChatCompletion['choices'][number];

export type ChatCompletionParse =
  | { readonly ok: true; readonly completion: ChatCompletion; readonly choice: CompletionChoice }
  | {
      readonly ok: false;
      /** Names each offending field, e.g. `choices.0.message: …`. */
      readonly message: string;
      /** True when the body has no first choice with a message at all (as opposed to a bad field). */
      readonly noChoice: boolean;
    };

/** Reads an already JSON-decoded body; never throws. */
export function parseChatCompletion(body: unknown): ChatCompletionParse {
  const parsed = chatCompletionSchema.safeParse(body);
  if (parsed.success) {
    const choice = parsed.data.choices[0] as CompletionChoice;
    return { ok: true, completion: parsed.data, choice };
  }
  return {
    ok: false,
    message: `unexpected chat completion shape: ${formatIssues(parsed.error)}`,
    noChoice: parsed.error.issues.some((issue) => lacksChoice(issue.path)),
  };
}

/** The body, `choices`, `choices.0` or `choices.0.message` itself missing or of the wrong type. */
function lacksChoice(path: readonly PropertyKey[]): boolean {
  return (
    path.length === 0 ||
    (path[0] === 'choices' &&
      (path.length === 1 ||
        (path.length === 2 && path[1] === 0) ||
        (path.length === 3 && path[2] === 'message')))
  );
}
