// Experiments for `edgerl ab list`, newest first: each with its arms in position order, their
// versions' served names and weights, and how many trajectories each arm has (ended, and of those
// with a reward: the number the report's sample size counts).
import { experimentStatuses } from '../../protocol/statuses.ts';
import { asc, desc, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { experimentArms } from '../schema/experiment-arms.ts';
import { type Experiment, experiments } from '../schema/experiments.ts';
import { policies, policyVersions } from '../schema/policies.ts';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { parseInput } from './parse-input.ts';

const listAbExperimentsSchema = z.object({ status: z.enum(experimentStatuses).optional() });
export type ListAbExperimentsInput = z.input<typeof listAbExperimentsSchema>;

export interface AbExperimentListing {
  readonly experiment: Experiment;
  readonly policyName: string;
  readonly arms: {
    readonly name: string;
    readonly adapterName: string;
    readonly weight: number;
    readonly ended: number;
    /** Ended with final_reward or verifier_reward set (the report's default reward). */
    readonly rewarded: number;
  }[];
}

export async function listAbExperiments(
  db: StoreDb,
  input: ListAbExperimentsInput = {},
): Promise<AbExperimentListing[]> {
  const query = parseInput(listAbExperimentsSchema, input, 'listAbExperiments');
  const rows = await db
    .select({ experiment: experiments, policyName: policies.name })
    .from(experiments)
    .innerJoin(policies, eq(policies.id, experiments.policyId))
    .where(query.status ? eq(experiments.status, query.status) : undefined)
    .orderBy(desc(experiments.createdAt), asc(experiments.name));
  if (rows.length === 0) return [];
  const ended = sql`${trajectories.status} <> 'running'`;
  const arms = await db
    .select({
      experimentId: experimentArms.experimentId,
      name: experimentArms.name,
      adapterName: policyVersions.adapterName,
      weight: experimentArms.weight,
      ended: sql<number>`(count(${trajectories.id}) filter (where ${ended}))::integer`,
      rewarded: sql<number>`(count(coalesce(${trajectories.finalReward}, ${trajectories.verifierReward})) filter (where ${ended}))::integer`,
    })
    .from(experimentArms)
    .innerJoin(policyVersions, eq(policyVersions.id, experimentArms.policyVersionId))
    .leftJoin(trajectories, eq(trajectories.experimentArmId, experimentArms.id))
    .where(
      inArray(
        experimentArms.experimentId,
        rows.map((row) => row.experiment.id),
      ),
    )
    .groupBy(experimentArms.id, policyVersions.adapterName)
    .orderBy(asc(experimentArms.position), asc(experimentArms.name));
  return rows.map((row) => ({
    ...row,
    arms: arms
      .filter((arm) => arm.experimentId === row.experiment.id)
      .map(({ experimentId: _, ...arm }) => arm),
  }));
}
