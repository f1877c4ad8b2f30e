// The stored record of an assistant turn: the message as the policy produced it plus the token
// data the trainer needs. A turn is token-exact only when the endpoint returned the sampled ids.
import type { AssistantMessage, ToolCall } from '../../protocol/chat.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import type { AssistantTurnMetadata, TurnRecorder } from '../../protocol/turn-metadata.ts';
import type { PolicyResponse } from '../policy/policy-client.ts';
import type { SamplingSettings } from '../policy/sampling-settings.ts';

export interface AssistantTurnContext {
  readonly trajectoryId: string;
  readonly index: number;
  /** What the turn was sampled with; a setting nobody asked for is recorded as null. */
  readonly sampling: Pick<SamplingSettings, 'temperature' | 'maxTokens'>;
  /** Policy attempts this turn took (1 when the first call succeeded). */
  readonly attempts: number;
  /** The episode loop, or the recording proxy. */
  readonly recordedBy: TurnRecorder;
}

/** Keeps the model's tool-call ids; invents `call_<index>_<n>` only where the endpoint gave none. */
export function withToolCallIds(message: AssistantMessage, index: number): AssistantMessage {
  if (!message.tool_calls || message.tool_calls.length === 0)
    return { role: 'assistant', content: message.content };
  const tool_calls: ToolCall[] = message.tool_calls.map((call, n) =>
    call.id ? call : { ...call, id: `call_${index}_${n + 1}` },
  );
  return { role: 'assistant', content: message.content, tool_calls };
}

/** An assistant turn record, its metadata typed as an assistant turn's. */
export type AssistantTurnInput = TurnInput & { metadata: AssistantTurnMetadata };

export function assistantTurn(
  response: PolicyResponse,
  message: AssistantMessage,
  context: AssistantTurnContext,
): AssistantTurnInput {
  const metadata: AssistantTurnMetadata = {
    finishReason: response.finishReason,
    tokenExact: response.completionTokenIds !== undefined,
    ...(context.sampling.temperature !== undefined ? { temperature: context.sampling.temperature } : {}),
    maxTokens: context.sampling.maxTokens ?? null,
    attempts: context.attempts,
    recordedBy: context.recordedBy,
    // Prompt ids are not stored: they repeat every earlier turn (quadratic in episode length), and
    // the trainer re-renders the prompt from the stored messages; promptTokenCount is kept instead.
    ...(response.untokenizedLogprobs ? { untokenizedLogprobs: response.untokenizedLogprobs } : {}),
    ...(response.replica ? { replica: response.replica } : {}),
  };
  return {
    trajectoryId: context.trajectoryId,
    index: context.index,
    role: 'assistant',
    content: message.content,
    ...(message.tool_calls ? { toolCalls: message.tool_calls } : {}),
    ...(response.completionTokenIds ? { completionTokenIds: response.completionTokenIds } : {}),
    ...(response.completionLogprobs ? { completionLogprobs: response.completionLogprobs } : {}),
    ...(response.promptTokenCount !== undefined ? { promptTokenCount: response.promptTokenCount } : {}),
    servedBy: response.servedBy,
    latencyMs: response.latencyMs,
    metadata,
  };
}
