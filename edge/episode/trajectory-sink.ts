// Where the episode loop writes: one trajectory, a step at a time (the opening messages; an assistant
// turn with its tool results), each step in one append, and the last step with the episode's end. The store implements it; tests use
// InMemoryTrajectorySink. Appends are idempotent by (trajectoryId, index), so the loop may retry one.
import type { EndStatus } from '../../protocol/finish.ts';
import type { TurnInput } from '../../protocol/turn.ts';

export interface TrajectoryEnd {
  readonly status: EndStatus;
  /** The environment verifier's reward in [0, 1], when it has a verifier and the episode did not fail. */
  readonly verifierReward?: number;
  /** Status `error` only: what failed. */
  readonly errorReason?: string;
  /** One line for people: the verifier's explanation or why the episode was truncated. */
  readonly detail?: string;
}

export interface TrajectorySink {
  readonly trajectoryId: string;
  /** Consecutive turns, stored all or none (a retry of stored ones is a no-op). */
  appendTurns(turns: readonly TurnInput[]): Promise<void>;
  /**
   * Ends the trajectory; `turns`, the episode's last step (consecutive turns after those appended),
   * are stored with the end, all or none, so the last step and the finish cost one write. A retry
   * after a failure is a no-op for what was stored.
   */
  finish(end: TrajectoryEnd, turns?: readonly TurnInput[]): Promise<void>;
}
