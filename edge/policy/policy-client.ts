// The port the episode loop asks for completions through: any OpenAI-compatible endpoint (see
// openai-policy-client.ts), or a scripted double in tests. No HTTP here, so the loop stays portable.
import type { AssistantMessage, ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import type { FinishReason } from '../../protocol/finish-reason.ts';
import type { Sampling } from './sampling-settings.ts';

/** The messages, the model and the sampling settings (under their own names; see sampling-settings.ts). */
export interface PolicyRequest extends Sampling {
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSpec[];
  /** OpenAI's `tool_choice`; undefined or "auto" sends none (the endpoint's default with tools). */
  readonly toolChoice?: 'auto' | 'required';
  /** Send the tools marked `strict` (guided calls under "auto" on endpoints that guide decoding). */
  readonly strictTools?: boolean;
  /** The model or adapter name to ask for, e.g. `agent@7`. */
  readonly model: string;
  /** Aborted on timeout (reason: a `TimeoutError`) or when the episode is cancelled. */
  readonly signal: AbortSignal;
}

export interface PolicyResponse {
  readonly message: AssistantMessage;
  /** Why generation stopped; values other than OpenAI's four are reported as `unknown`. */
  readonly finishReason: FinishReason;
  /** Exact sampled ids, when the endpoint returns them (vLLM `return_token_ids`, edgerl's own endpoint). */
  readonly completionTokenIds?: number[];
  /** Sampling logprob of each completion token; only set together with ids of the same length. */
  readonly completionLogprobs?: number[];
  /** Logprobs the endpoint returned without token ids (e.g. OpenAI): kept, but not token-exact. */
  readonly untokenizedLogprobs?: number[];
  readonly promptTokenIds?: number[];
  readonly promptTokenCount?: number;
  /** The model or adapter name that actually answered. */
  readonly servedBy: string;
  /** The inference replica that answered, when the edge routes over a fleet. */
  readonly replica?: string;
  readonly latencyMs: number;
}

export interface PolicyClient {
  /** Throws `PolicyError` for failures; the loop retries the retryable ones. */
  complete(request: PolicyRequest): Promise<PolicyResponse>;
}
