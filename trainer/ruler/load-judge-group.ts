// Reads a group from the trajectory store as RULER's input: each trajectory's turns as chat messages,
// with its verifier reward. Trajectories that are not usable (usable-trajectory.ts: an infrastructure
// `error`, still running, or no turns) are left out and listed. The judge is shown the tools stored
// with the trajectories (stored-group-tools.ts).
import type { Store } from '../../db/store.ts';
import { turnToChatMessage } from '../../db/turn-to-chat-message.ts';
import type { GroupStatus } from '../../protocol/statuses.ts';
import type { StoredGroup } from './score-and-record.ts';
import { storedGroupTools } from './stored-group-tools.ts';
import { isUsableTrajectory } from './usable-trajectory.ts';

export interface LoadedJudgeGroup {
  readonly group: StoredGroup;
  /** The group's lifecycle status in the store: only `complete` (or already judged) groups can be scored. */
  readonly status: GroupStatus;
  /** The environment the trajectories ran in (the first one's). */
  readonly env?: string;
  /** Judged trajectories with no stored tool list (written before edgerl stored tools). */
  readonly toolsMissing: number;
  /** Trajectory ids not judged, with why. */
  readonly skipped: readonly { readonly trajectoryId: string; readonly status: string }[];
}

export interface LoadJudgeGroupOptions {
  readonly rubric?: string;
}

export async function loadJudgeGroup(
  store: Pick<Store, 'getGroup'>,
  groupId: string,
  options: LoadJudgeGroupOptions = {},
): Promise<LoadedJudgeGroup> {
  const { group, trajectories } = await store.getGroup({ groupId, includeTurns: true });
  const judged = trajectories.filter(isUsableTrajectory);
  const verifierRewards: Record<string, number> = {};
  for (const t of judged) if (t.verifierReward !== null) verifierRewards[t.id] = t.verifierReward;
  const { tools, missing } = storedGroupTools(judged);
  return {
    group: {
      groupId,
      trajectories: judged.map((t) => ({ id: t.id, messages: (t.turns ?? []).map(turnToChatMessage) })),
      verifierRewards,
      ...(tools ? { tools } : {}),
      ...(options.rubric ? { rubric: options.rubric } : {}),
    },
    status: group.status,
    ...(trajectories[0] ? { env: trajectories[0].env } : {}),
    toolsMissing: missing,
    skipped: trajectories
      .filter((t) => !judged.includes(t))
      .map((t) => ({ trajectoryId: t.id, status: t.turns?.length ? t.status : `${t.status}, no turns` })),
  };
}
