// Which trajectories of a group are judged and trained on: those that ended by the policy's own doing
// (`finished`, or `truncated` by a turn or token limit) and hold turns. One that ended in an
// infrastructure `error` (store or policy endpoint down: not the policy's doing, conventions §8) or
// is still `running` is left out. Leaves out reporting why (the callers do).
import type { TrajectoryStatus } from '../../protocol/statuses.ts';

export interface TrajectoryOutcome {
  readonly status: TrajectoryStatus;
  readonly turns?: readonly unknown[] | undefined;
}

export function isUsableTrajectory(trajectory: TrajectoryOutcome): boolean {
  return (
    (trajectory.status === 'finished' || trajectory.status === 'truncated') &&
    (trajectory.turns?.length ?? 0) > 0
  );
}
