// Turns trajectories into training sequences: the chat-template render with each assistant turn's
// stored sampled ids spliced in (tokenizer's renderForTraining), the mask over assistant tokens, and
// the sampling logprobs aligned to the model's next-token predictions. Pure: no store, no tensors.
// Leaves out padding and micro-batching (train-step.ts).
//
// Alignment: the model gives logprob[t] = log p(ids[t + 1] | ids[≤ t]) for t in [0, T − 1), so every
// per-token array here has T − 1 entries, entry t describing token t + 1.
// Assistant turns without stored ids (or without logprobs) are re-tokenized and trained with the
// importance ratio fixed at 1 (the on-policy assumption; `onPolicy` marks them), as ART and TRL do for
// completions they did not sample with logprobs. Drift between stored and re-tokenized ids is measured
// per trajectory (re-tokenized text is not always the sampled token sequence).
import type { ToolSpec } from '../../protocol/chat.ts';
import type { TrainingSequence } from '../engine/training-sequence.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import {
  renderForTraining,
  TemplatePrefixError,
  type TrainingMessage,
} from '../../model/tokenizer/render-for-training.ts';

/** An assistant message as stored: the message plus what the inference server returned for it (the render reads the ids; the logprobs stay with the message for the span that holds them). */
export type StoredMessage = TrainingMessage & { readonly completionLogprobs?: readonly number[] };

export interface TrajectoryInput {
  readonly trajectoryId: string;
  readonly groupId: string | null;
  readonly messages: readonly StoredMessage[];
  readonly tools?: readonly ToolSpec[];
  /** The trajectory's advantage (GRPO) or 1 (SFT); every trained token of it gets this value. */
  readonly advantage: number;
}

/** What a trajectory's render measured, kept per trajectory in the store. */
export interface TrajectoryTokenReport {
  readonly trajectoryId: string;
  /** Assistant turns spliced from stored ids. */
  readonly sampledTurns: number;
  /** Assistant turns re-tokenized from text (no stored ids). */
  readonly retokenizedTurns: number;
  /** Sampled turns whose stored ids differ from re-tokenizing their text. */
  readonly driftTurns: number;
  /** Σ over those turns of the differing window's length (render-for-training.ts). */
  readonly driftTokens: number;
  /** Trained tokens whose sampling logprob is unknown (ratio ≡ 1). */
  readonly onPolicyTokens: number;
}

export type BatchSkipReason = 'template-prefix' | 'too-long' | 'no-assistant-tokens' | 'bad-token-data';

export interface SkippedTrajectory {
  readonly trajectoryId: string;
  readonly reason: BatchSkipReason;
  readonly detail: string;
}

export interface BuiltBatch {
  readonly sequences: TrainingSequence[];
  readonly reports: TrajectoryTokenReport[];
  readonly skipped: SkippedTrajectory[];
}

export interface BuildBatchOptions {
  /** The model's vocabulary size: stored ids at or beyond it were sampled from another model. */
  readonly vocabSize: number;
  /** Longest sequence kept, in tokens. */
  readonly maxTokens: number;
  /** Template variables, as for applyChatTemplate (e.g. `{ enable_thinking: false }`). */
  readonly templateExtra?: Readonly<Record<string, unknown>>;
}

export function buildBatch(
  tokenizer: ChatTokenizer,
  trajectories: readonly TrajectoryInput[],
  options: BuildBatchOptions,
): BuiltBatch {
  const sequences: TrainingSequence[] = [];
  const reports: TrajectoryTokenReport[] = [];
  const skipped: SkippedTrajectory[] = [];
  for (const trajectory of trajectories) {
    const built = buildSequence(tokenizer, trajectory, options);
    if ('reason' in built) skipped.push(built);
    else {
      sequences.push(built.sequence);
      reports.push(built.report);
    }
  }
  return { sequences, reports, skipped };
}

function buildSequence(
  tokenizer: ChatTokenizer,
  trajectory: TrajectoryInput,
  options: BuildBatchOptions,
): { sequence: TrainingSequence; report: TrajectoryTokenReport } | SkippedTrajectory {
  const skip = (reason: BatchSkipReason, detail: string): SkippedTrajectory => ({
    trajectoryId: trajectory.trajectoryId,
    reason,
    detail,
  });
  if (!Number.isFinite(trajectory.advantage)) {
    return skip('bad-token-data', `advantage is ${trajectory.advantage}`);
  }
  const problem = tokenDataProblem(trajectory.messages, options.vocabSize);
  if (problem) return skip('bad-token-data', problem);

  let render: ReturnType<typeof renderForTraining>;
  try {
    render = renderForTraining(tokenizer, {
      messages: trajectory.messages,
      ...(trajectory.tools ? { tools: trajectory.tools } : {}),
      ...(options.templateExtra ? { extra: options.templateExtra } : {}),
      trainOnUnsampled: true,
    });
  } catch (error) {
    if (error instanceof TemplatePrefixError) return skip('template-prefix', error.message);
    throw error;
  }
  const { ids, assistantMask, spans } = render;
  if (ids.length > options.maxTokens) {
    return skip('too-long', `${ids.length} tokens, more than the limit of ${options.maxTokens}`);
  }
  const length = ids.length - 1;
  if (length < 1) return skip('no-assistant-tokens', 'the render has fewer than two tokens');
  const targetMask = assistantMask.slice(1); // [T − 1]: target t + 1
  const oldLogprobs = new Array<number>(length).fill(Number.NaN);
  const onPolicy = new Array<number>(length).fill(0);
  for (const span of spans) {
    const message = trajectory.messages[span.messageIndex];
    const logprobs = span.sampled ? message?.completionLogprobs : undefined;
    for (let position = span.start; position < span.end; position++) {
      if (assistantMask[position] !== 1) continue;
      const target = position - 1; // [T − 1] index predicting `position`
      const stored = logprobs?.[position - span.start];
      if (stored !== undefined && Number.isFinite(stored)) oldLogprobs[target] = stored;
      else onPolicy[target] = 1;
    }
  }
  const trainedTokens = targetMask.reduce((sum, bit) => sum + bit, 0);
  if (trainedTokens === 0) return skip('no-assistant-tokens', 'no assistant turn to train on');
  const sampledTurns = spans.filter((span) => span.sampled).length;
  return {
    sequence: {
      trajectoryId: trajectory.trajectoryId,
      groupId: trajectory.groupId,
      ids,
      targetMask,
      oldLogprobs,
      onPolicy,
      advantage: trajectory.advantage,
      trainedTokens,
    },
    report: {
      trajectoryId: trajectory.trajectoryId,
      sampledTurns,
      retokenizedTurns: spans.length - sampledTurns,
      driftTurns: render.drift.length,
      driftTokens: render.drift.reduce((sum, drift) => sum + drift.differingTokens, 0),
      onPolicyTokens: onPolicy.reduce((sum, bit) => sum + bit, 0),
    },
  };
}

/** Stored ids outside the vocabulary, or logprobs that do not pair up with the ids, name the turn. */
function tokenDataProblem(messages: readonly StoredMessage[], vocabSize: number): string | undefined {
  for (const [index, message] of messages.entries()) {
    const ids = message.completionTokenIds;
    const logprobs = message.completionLogprobs;
    if (logprobs && (!ids || logprobs.length !== ids.length)) {
      return `message ${index}: ${logprobs.length} logprobs for ${ids?.length ?? 0} token ids`;
    }
    const bad = ids?.find((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
    if (bad !== undefined) {
      return `message ${index}: token id ${bad} is outside the model's vocabulary [0, ${vocabSize}) (sampled from another model?)`;
    }
    if (ids && ids.length === 0) return `message ${index}: empty completionTokenIds`;
  }
  return undefined;
}
