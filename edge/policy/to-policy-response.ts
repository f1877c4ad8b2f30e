// A chat completion body as the episode loop takes it: the shared reader (protocol/openai) for the
// shape, then a PolicyResponse with vLLM's token ids and logprobs kept when present. Pure: no I/O.
import type { AssistantMessage, ToolCall } from '../../protocol/chat.ts';
import { type FinishReason, finishReasons } from '../../protocol/finish-reason.ts';
import { parseChatCompletion } from '../../protocol/openai/chat-completion.ts';
import type { PolicyResponse } from './policy-client.ts';
import { PolicyError } from './policy-error.ts';

/**
 * Stands in for a tool call without a name, which a model can produce and a parser pass on. It is
 * no tool's name, so the loop answers it as an unknown tool; the sampled token ids stay exact.
 */
export const missingToolName = '(missing)';

/** Throws PolicyError `invalid-response` naming the offending field when `body` is no completion. */
export function toPolicyResponse(
  body: unknown,
  context: { model: string; latencyMs: number },
): PolicyResponse {
  const parsed = parseChatCompletion(body);
  if (!parsed.ok) throw new PolicyError('invalid-response', parsed.message);
  const { completion, choice } = parsed;
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
