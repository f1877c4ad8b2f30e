// Reads an OpenAI-style chat completion into a PolicyResponse, with vLLM's extras when present:
// top-level `prompt_token_ids` and per-choice `token_ids` (vLLM >= 0.10.2, `return_token_ids`),
// and the sampled logprobs from `choices[0].logprobs.content[i].logprob`. Pure: no I/O.
import { z } from 'zod';
import type { AssistantMessage, ToolCall } from '../../protocol/chat.ts';
import { formatIssues } from '../../protocol/format-issues.ts';
import { type FinishReason, finishReasons } from '../../protocol/finish-reason.ts';
import type { PolicyResponse } from './policy-client.ts';
import { PolicyError } from './policy-error.ts';

const tokenIds = z.array(z.number().int().nonnegative());

const completionSchema = z.object({
  model: z.string().optional(),
  prompt_token_ids: tokenIds.nullish(),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative().optional() }).nullish(),
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        token_ids: tokenIds.nullish(),
        logprobs: z.object({ content: z.array(z.object({ logprob: z.number() })).nullish() }).nullish(),
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                function: z.object({
                  name: z.string().nullish(),
                  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
                }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
});

/**
 * Stands in for a tool call without a name, which a model can produce and a parser pass on. It is
 * no tool's name, so the loop answers it as an unknown tool; the sampled token ids stay exact.
 */
export const missingToolName = '(missing)';

export function parseChatCompletion(
  body: unknown,
  context: { model: string; latencyMs: number },
): PolicyResponse {
  const parsed = completionSchema.safeParse(body);
  if (!parsed.success) {
    throw new PolicyError(
      'invalid-response',
      `unexpected chat completion shape: ${formatIssues(parsed.error)}`,
    );
  }
  const completion = parsed.data;
  const choice = completion.choices[0] as (typeof completion.choices)[number];
  const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).map((call) => ({
    id: call.id ?? '',
    type: 'function',
    function: {
      name: call.function.name || missingToolName,
      arguments:
        typeof call.function.arguments === 'string'
          ? call.function.arguments
          : call.function.arguments
            ? JSON.stringify(call.function.arguments)
            : '',
    },
  }));
  const message: AssistantMessage = {
    role: 'assistant',
    content: choice.message.content ?? null,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
  const ids = choice.token_ids ?? undefined;
  const logprobs = choice.logprobs?.content?.map((entry) => entry.logprob);
  // Logprobs count as token-exact only beside ids of the same length; otherwise they are kept apart.
  const aligned = ids !== undefined && logprobs !== undefined && logprobs.length === ids.length;
  const promptTokenIds = completion.prompt_token_ids ?? undefined;
  const promptTokenCount = completion.usage?.prompt_tokens ?? promptTokenIds?.length;
  return {
    message,
    finishReason: finishReasonOf(choice.finish_reason),
    ...(ids ? { completionTokenIds: ids } : {}),
    ...(aligned ? { completionLogprobs: logprobs } : {}),
    ...(logprobs && !aligned ? { untokenizedLogprobs: logprobs } : {}),
    ...(promptTokenIds ? { promptTokenIds } : {}),
    ...(promptTokenCount !== undefined ? { promptTokenCount } : {}),
    servedBy: completion.model || context.model,
    latencyMs: context.latencyMs,
  };
}

function finishReasonOf(value: string | null | undefined): FinishReason {
  return (finishReasons as readonly string[]).includes(value ?? '') ? (value as FinishReason) : 'unknown';
}
