// What the A/B report needs from the store, per arm of one experiment: how its trajectories ended
// (SQL counts), mean turns and latency of the ended ones, and each ended one's status and reward, null
// included (Welch's test and binary detection want the values, not just their moments; which of them
// count is the report's rule, experiments/success.ts).
// Trajectories are found by their experiment arm, so the report does not depend on how the edge
// routed them; `split` keeps only trajectories of tasks in that split (eval runs).
import { type TrajectoryStatus, taskSplits } from '../../protocol/statuses.ts';
import { and, asc, eq, inArray, ne, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { experimentArms } from '../schema/experiment-arms.ts';
import { policyVersions } from '../schema/policies.ts';
import { tasks } from '../schema/tasks.ts';
import { trajectories } from '../schema/trajectories.ts';
import { type AbRewardSource, abRewardSources } from '../store-constants.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const rewardExpressions = {
  auto: sql<number | null>`coalesce(${trajectories.finalReward}, ${trajectories.verifierReward})`,
  final: sql<number | null>`${trajectories.finalReward}`,
  verifier: sql<number | null>`${trajectories.verifierReward}`,
  judge: sql<number | null>`${trajectories.judgeScore}`,
} satisfies Record<AbRewardSource, SQL<number | null>>;

const abArmOutcomesSchema = z.object({
  experimentId: id,
  reward: z.enum(abRewardSources).default('auto'),
  split: z.enum(taskSplits).optional(),
});
export type AbArmOutcomesInput = z.input<typeof abArmOutcomesSchema>;

export interface AbArmOutcomes {
  readonly armId: string;
  readonly name: string;
  readonly position: number;
  readonly adapterName: string;
  /** Share of traffic (weights are stored normalised). */
  readonly weight: number;
  readonly running: number;
  readonly finished: number;
  readonly truncated: number;
  readonly error: number;
  /** Means over ended trajectories; null when none has ended. */
  readonly turnCountMean: number | null;
  readonly latencyMsMean: number | null;
  /** Every ended trajectory's status and reward (null when it has none), oldest first. */
  readonly ended: EndedOutcome[];
}

export interface EndedOutcome {
  readonly status: Exclude<TrajectoryStatus, 'running'>;
  readonly reward: number | null;
}

export async function abArmOutcomes(db: StoreDb, input: AbArmOutcomesInput): Promise<AbArmOutcomes[]> {
  const query = parseInput(abArmOutcomesSchema, input, 'abArmOutcomes');
  const inSplit = query.split
    ? inArray(
        trajectories.taskId,
        db.select({ id: tasks.id }).from(tasks).where(eq(tasks.split, query.split)),
      )
    : undefined;
  const ended = sql`${trajectories.status} <> 'running'`;
  const counted = (status: string) =>
    sql<number>`(count(${trajectories.id}) filter (where ${trajectories.status} = ${status}))::integer`;
  const arms = await db
    .select({
      armId: experimentArms.id,
      name: experimentArms.name,
      position: experimentArms.position,
      adapterName: policyVersions.adapterName,
      weight: experimentArms.weight,
      running: counted('running'),
      finished: counted('finished'),
      truncated: counted('truncated'),
      error: counted('error'),
      turnCountMean: sql<
        number | null
      >`avg(${trajectories.turnCount}::double precision) filter (where ${ended})`,
      latencyMsMean: sql<number | null>`avg(${trajectories.latencyMs}) filter (where ${ended})`,
    })
    .from(experimentArms)
    .innerJoin(policyVersions, eq(policyVersions.id, experimentArms.policyVersionId))
    .leftJoin(trajectories, and(eq(trajectories.experimentArmId, experimentArms.id), inSplit))
    .where(eq(experimentArms.experimentId, query.experimentId))
    .groupBy(experimentArms.id, policyVersions.adapterName)
    .orderBy(asc(experimentArms.position), asc(experimentArms.name));

  const reward = rewardExpressions[query.reward];
  const endedRows = await db
    .select({ armId: trajectories.experimentArmId, status: trajectories.status, reward })
    .from(trajectories)
    .innerJoin(experimentArms, eq(experimentArms.id, trajectories.experimentArmId))
    .where(
      and(eq(experimentArms.experimentId, query.experimentId), ne(trajectories.status, 'running'), inSplit),
    )
    .orderBy(asc(trajectories.startedAt), asc(trajectories.id));
  const endedByArm = new Map<string, EndedOutcome[]>();
  for (const row of endedRows) {
    if (row.armId === null || row.status === 'running') continue;
    const list = endedByArm.get(row.armId) ?? [];
    list.push({ status: row.status, reward: row.reward === null ? null : Number(row.reward) });
    endedByArm.set(row.armId, list);
  }
  return arms.map((arm) => ({
    ...arm,
    turnCountMean: arm.turnCountMean === null ? null : Number(arm.turnCountMean),
    latencyMsMean: arm.latencyMsMean === null ? null : Number(arm.latencyMsMean),
    ended: endedByArm.get(arm.armId) ?? [],
  }));
}
