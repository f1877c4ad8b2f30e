// Where the episode loop writes: one trajectory, a step at a time (the opening messages; an assistant
// turn with its tool results), each step in one append. The store implements it; tests use
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
  finish(end: TrajectoryEnd): Promise<void>;
}
