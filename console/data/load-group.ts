// A group's page data: the group, its task and sampling version, every trajectory with its turns,
// the newest judge score (with explanation) of each, and the advantages the trainer would give them.
import type { JudgeScore } from '../../db/schema/judge-scores.ts';
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { Task } from '../../db/schema/tasks.ts';
import type { GroupWithTrajectories, Store } from '../../db/store.ts';
import { type GroupAdvantageView, advantagesOf } from './group-advantages.ts';

export interface GroupView extends GroupWithTrajectories {
  readonly task: Task;
  readonly version: PolicyVersion | undefined;
  readonly judge: Record<string, JudgeScore>;
  readonly advantages: GroupAdvantageView;
}

export async function loadGroup(store: Store, groupId: string): Promise<GroupView> {
  const loaded = await store.getGroup({ groupId, includeTurns: true });
  const task = await store.getTask(loaded.group.taskId);
  const version = loaded.group.policyVersionId
    ? await store.getPolicyVersion(loaded.group.policyVersionId)
    : undefined;
  const judge = await store.latestJudgeScores({
    trajectoryIds: loaded.trajectories.map((trajectory) => trajectory.id),
  });
  const run = loaded.group.trainingRunId
    ? (await store.listTrainingRuns({ trainingRunIds: [loaded.group.trainingRunId] }))[0]?.run
    : undefined;
  return { ...loaded, task, version, judge, advantages: advantagesOf(loaded.trajectories, run?.config) };
}
