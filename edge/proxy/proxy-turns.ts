// The turns the recording proxy stores: the client's own messages as it sent them (an assistant
// message it sent is marked `fromClient`: recorded, not sampled here), and the upstream's reply as a
// sampled assistant turn with the settings the client asked for. Pure: no store, no fetch.
import type { ChatMessage } from '../../protocol/chat.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import type { AssistantTurnMetadata } from '../../protocol/turn-metadata.ts';
import { turnValueIssues } from '../../protocol/validate-turns.ts';
import { assistantTurn, withToolCallIds } from '../episode/assistant-turn.ts';
import { ApiError } from '../http/api-error.ts';
import { toPolicyResponse } from '../policy/to-policy-response.ts';
import type { ProxyRequest } from './proxy-request.ts';

/** The stored assistant turn for a completion, and the tool-call ids it was stored with. */
export function replyTurn(
  call: { readonly request: ProxyRequest; readonly trajectoryId: string },
  json: Record<string, unknown>,
  model: string,
  index: number,
  latencyMs: number,
  replica?: string,
): { turn: TurnInput; toolCallIds: string[] } {
  const { request, trajectoryId } = call;
  try {
    const parsed = toPolicyResponse(json, { model, latencyMs });
    const response = replica ? { ...parsed, replica } : parsed;
    const message = withToolCallIds(response.message, index);
    const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? undefined;
    const built = assistantTurn(response, message, {
      trajectoryId,
      index,
      // What the client asked for; a temperature it left out is the API's default, 1.
      sampling: { temperature: request.temperature ?? 1, ...(maxTokens !== undefined ? { maxTokens } : {}) },
      attempts: 1,
      recordedBy: 'proxy',
    });
    const metadata: AssistantTurnMetadata = {
      ...built.metadata,
      ...(request.stream ? { streamed: true } : {}),
    };
    // The endpoint's values are held to every writer's rule (a logprob above 0 is no logprob): its error.
    const bad = turnValueIssues(built)[0];
    if (bad) throw new Error(`${bad.path.join('.')}: ${bad.message}`);
    return {
      turn: { ...built, metadata },
      toolCallIds: (message.tool_calls ?? []).map((toolCall) => toolCall.id),
    };
  } catch (error) {
    throw new ApiError('bad-gateway', `inference endpoint: ${errorMessage(error)}`, { cause: error });
  }
}

/** An assistant message the client sent: recorded as it came, not sampled here. */
const clientAssistantMetadata: AssistantTurnMetadata = { recordedBy: 'proxy', fromClient: true };

export function promptTurn(trajectoryId: string, index: number, message: ChatMessage): TurnInput {
  switch (message.role) {
    case 'assistant':
      return {
        trajectoryId,
        index,
        role: 'assistant',
        content: message.content,
        ...(message.tool_calls ? { toolCalls: message.tool_calls } : {}),
        metadata: clientAssistantMetadata,
      };
    case 'tool':
      return {
        trajectoryId,
        index,
        role: 'tool',
        content: message.content,
        toolCallId: message.tool_call_id,
      };
    default:
      return { trajectoryId, index, role: message.role, content: message.content };
  }
}
