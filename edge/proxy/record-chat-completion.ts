// The recording proxy: forwards one chat completions request to the inference endpoint and records
// the exchange as turns of the trajectory the client names. The request's messages not stored yet
// are appended while the upstream call runs (appends are serial per trajectory, the model call is
// the slow part), then the reply, with its token ids and logprobs when the endpoint returns them.
// Upstream errors pass through unchanged and record no reply; the client may simply retry.
import { isStoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import { assistantTurn, withToolCallIds } from '../episode/assistant-turn.ts';
import { errorMessage } from '../episode/error-message.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import { parseChatCompletion } from '../policy/parse-chat-completion.ts';
import { rolloutMetadataSchema } from '../rollouts/rollout-metadata.ts';
import { clientResponse } from './client-response.ts';
import { newMessages } from './new-messages.ts';
import { type ProxyRequest, toChatMessage } from './proxy-request.ts';
import { callUpstream, type UpstreamEndpoint } from './upstream.ts';

export interface ProxyContext {
  readonly store: Store;
  readonly upstream: UpstreamEndpoint;
}

export interface ProxyCall {
  readonly trajectoryId: string;
  /** `x-edgerl-policy`: the policy to route to when the trajectory has no recorded model. */
  readonly policy?: string;
  readonly request: ProxyRequest;
  readonly signal?: AbortSignal;
}

export interface ProxyResult {
  readonly status: number;
  readonly contentType: string;
  /** JSON for a recorded reply; the upstream's own text for an upstream error. */
  readonly body: string;
  /** Index of the recorded assistant turn, when one was recorded. */
  readonly turnIndex?: number;
  readonly model: string;
}

export async function recordChatCompletion(context: ProxyContext, call: ProxyCall): Promise<ProxyResult> {
  const { store } = context;
  const { request, trajectoryId } = call;
  if (request.stream) {
    throw invalidField('stream', 'streaming is not supported by the recording proxy yet; send stream: false');
  }
  const { trajectory, turns } = await store.getTrajectory(trajectoryId).catch((error: unknown) => {
    if (isStoreError(error, 'validation')) {
      throw invalidField('x-edgerl-trajectory', 'must be a trajectory id (a uuid)');
    }
    throw error;
  });
  if (trajectory.status !== 'running') {
    throw new ApiError(
      'conflict',
      `trajectory ${trajectoryId} is ${trajectory.status}; it takes no more turns`,
    );
  }
  const messages = request.messages.map(toChatMessage);
  const fresh = newMessages(turns, messages);
  if (!fresh.ok) throw new ApiError('conflict', `${fresh.field}: ${fresh.message}`, { field: fresh.field });
  const model = await modelFor(store, trajectory.metadata, call.policy, request.model);
  const upstreamBody: Record<string, unknown> = {
    ...request,
    model,
    logprobs: true,
    ...(context.upstream.requestTokenIds ? { return_token_ids: true } : {}),
  };
  const appended = appendAll(
    store,
    fresh.messages.map((message, offset) => promptTurn(trajectoryId, fresh.firstIndex + offset, message)),
  );
  // Both settle before anything is thrown, so no append is left running unobserved.
  const [reply, appendResult] = await Promise.allSettled([
    callUpstream(context.upstream, upstreamBody, call.signal),
    appended,
  ]);
  if (appendResult.status === 'rejected') throw appendResult.reason;
  if (reply.status === 'rejected') throw reply.reason;
  const upstream = reply.value;
  if (upstream.status < 200 || upstream.status >= 300) {
    return { status: upstream.status, contentType: upstream.contentType, body: upstream.text, model };
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(upstream.text) as Record<string, unknown>;
  } catch (error) {
    throw new ApiError('bad-gateway', 'inference endpoint: the completion is not JSON', { cause: error });
  }
  const index = messages.length;
  let turn: TurnInput;
  let toolCallIds: string[];
  try {
    const response = parseChatCompletion(json, { model, latencyMs: upstream.latencyMs });
    const message = withToolCallIds(response.message, index);
    toolCallIds = (message.tool_calls ?? []).map((toolCall) => toolCall.id);
    const requestedMax = request.max_completion_tokens ?? request.max_tokens ?? undefined;
    const built = assistantTurn(response, message, {
      trajectoryId,
      index,
      temperature: request.temperature ?? 1,
      maxTokens: requestedMax ?? 0,
      attempts: 1,
    });
    turn = {
      ...built,
      metadata: { ...built.metadata, maxTokens: requestedMax ?? null, recordedBy: 'proxy' },
    };
  } catch (error) {
    throw new ApiError('bad-gateway', `inference endpoint: ${errorMessage(error)}`, { cause: error });
  }
  await store.appendTurn(turn);
  const body = clientResponse(
    json,
    { logprobs: request.logprobs === true, tokenIds: request.return_token_ids === true },
    toolCallIds,
  );
  return {
    status: 200,
    contentType: 'application/json',
    body: JSON.stringify(body),
    turnIndex: index,
    model,
  };
}

/**
 * The model to ask for: the one routing recorded on the trajectory when it started; else the policy
 * the header names (or the request's own model) when the store knows it as a policy or version;
 * else the request's model unchanged.
 */
async function modelFor(
  store: Store,
  metadata: Record<string, unknown>,
  policy: string | undefined,
  requested: string,
): Promise<string> {
  const recorded = rolloutMetadataSchema.shape.model.safeParse(metadata.model);
  if (recorded.success) return recorded.data;
  const version = await store.resolvePolicyVersion(policy ?? requested);
  if (version) return version.adapterName;
  if (policy !== undefined)
    throw invalidField('x-edgerl-policy', `no policy or version is named "${policy}"`);
  return requested;
}

function promptTurn(
  trajectoryId: string,
  index: number,
  message: ReturnType<typeof toChatMessage>,
): TurnInput {
  switch (message.role) {
    case 'assistant':
      return {
        trajectoryId,
        index,
        role: 'assistant',
        content: message.content,
        ...(message.tool_calls ? { toolCalls: message.tool_calls } : {}),
        metadata: { recordedBy: 'proxy', fromClient: true },
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

async function appendAll(store: Store, turns: readonly TurnInput[]): Promise<void> {
  for (const turn of turns) await store.appendTurn(turn);
}
