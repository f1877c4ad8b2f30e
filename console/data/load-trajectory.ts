// A trajectory's page data: its turns, task, sampling version, group (with the advantage the trainer
// would give it there), experiment arm and newest judge score.
import type { JudgeScore } from '../../db/schema/judge-scores.ts';
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { Task } from '../../db/schema/tasks.ts';
import type { Trajectory } from '../../db/schema/trajectories.ts';
import type { TurnRow } from '../../db/schema/turns.ts';
import type { Store } from '../../db/store.ts';
import { advantagesOf } from './group-advantages.ts';

export interface TrajectoryView {
  readonly trajectory: Trajectory;
  readonly turns: TurnRow[];
  readonly task: Task | undefined;
  readonly version: PolicyVersion | undefined;
  readonly judge: JudgeScore | undefined;
  readonly advantage: number | undefined;
  /** Its slot in the group (1-based) and the group's size. */
  readonly slot: { readonly index: number; readonly of: number } | undefined;
}

export async function loadTrajectory(store: Store, trajectoryId: string): Promise<TrajectoryView> {
  const { trajectory, turns } = await store.getTrajectory(trajectoryId);
  const task = trajectory.taskId ? await store.getTask(trajectory.taskId) : undefined;
  const version = trajectory.policyVersionId
    ? await store.getPolicyVersion(trajectory.policyVersionId)
    : undefined;
  const judge = (await store.latestJudgeScores({ trajectoryIds: [trajectory.id] }))[trajectory.id];
  let advantage: number | undefined;
  let slot: TrajectoryView['slot'];
  if (trajectory.groupId) {
    const { group, trajectories } = await store.getGroup({ groupId: trajectory.groupId });
    const run = group.trainingRunId
      ? (await store.listTrainingRuns({ trainingRunIds: [group.trainingRunId] }))[0]?.run
      : undefined;
    advantage = advantagesOf(trajectories, run?.config).advantages[trajectory.id];
    slot = { index: trajectories.findIndex((member) => member.id === trajectory.id) + 1, of: group.size };
  }
  return { trajectory, turns, task, version, judge, advantage, slot };
}
