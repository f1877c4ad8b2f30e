// The tools stored with a trajectory, which its training render shows the model as the policy saw
// them (the trainer never rebuilds them from environment code, which may have changed since).
import type { TrajectoryRow } from './group-rewards.ts';
import type { TrajectoryInput } from './build-batch.ts';

/**
 * A row written before edgerl stored tools has none: it is rendered without tools (its prompt may then
 * differ from the one sampled) and counted in the progress line, not refused, so groups recorded
 * before the upgrade stay trainable.
 */
export function storedTools(trajectory: Pick<TrajectoryRow, 'tools'>): { tools?: TrajectoryInput['tools'] } {
  return trajectory.tools === null ? {} : { tools: trajectory.tools };
}

export function toolsMissingLine(count: number): string {
  return `${count} trajectory(ies) have no stored tool list (recorded before edgerl stored tools): rendered without tools`;
}
