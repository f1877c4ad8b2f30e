// How an episode closes: its end status and, for episodes that reached an answer or the turn limit,
// the environment verifier's reward. A verifier that throws or leaves [0, 1] fails the episode:
// a made-up reward would be trained on.
import type { ChatMessage } from '../../protocol/chat.ts';
import type { Capabilities } from '../environments/capabilities.ts';
import type { Environment, EnvironmentTask, VerifierResult } from '../environments/environment.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { rewardIssue } from '../../protocol/validate-turns.ts';
import type { TrajectoryEnd } from './trajectory-sink.ts';
import type { TurnOutcome } from './turn-outcome.ts';

export interface ScoreInput<TTask extends EnvironmentTask> {
  readonly environment: Environment<TTask>;
  readonly task: TTask;
  readonly messages: readonly ChatMessage[];
  readonly outcome: Exclude<TurnOutcome, { kind: 'continue' }>;
  readonly capabilities: Capabilities;
  readonly signal: AbortSignal;
}

export async function scoreEpisode<TTask extends EnvironmentTask>(
  input: ScoreInput<TTask>,
): Promise<TrajectoryEnd> {
  const { outcome, environment } = input;
  if (outcome.kind === 'error') return { status: 'error', errorReason: outcome.reason };
  const status = outcome.kind === 'final' ? 'finished' : 'truncated';
  const truncation = outcome.kind === 'truncated' ? `truncated: ${outcome.reason}` : undefined;
  if (!environment.verify) return { status, ...(truncation ? { detail: truncation } : {}) };
  let verdict: VerifierResult;
  try {
    verdict = await environment.verify(
      {
        task: input.task,
        messages: input.messages,
        finalAnswer: outcome.kind === 'final' ? outcome.answer : null,
        status,
      },
      { ...input.capabilities, signal: input.signal },
    );
  } catch (error) {
    return { status: 'error', errorReason: `verifier: ${errorMessage(error)}` };
  }
  const outOfRange = rewardIssue(verdict.reward);
  if (outOfRange) return { status: 'error', errorReason: `verifier: reward ${outOfRange}` };
  const detail = [truncation, verdict.detail].filter(Boolean).join('; ');
  return { status, verifierReward: verdict.reward, ...(detail ? { detail } : {}) };
}
