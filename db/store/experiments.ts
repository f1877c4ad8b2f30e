// Experiments and their arms, the basics: read one, list them, change arm weights, stop one. Creating
// one is create-experiment.ts; routing traffic by weight and promoting a winner belong to the A/B code.
import { experimentStatuses } from '../../protocol/statuses.ts';
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type ExperimentArm, experimentArms } from '../schema/experiment-arms.ts';
import { type Experiment, experiments } from '../schema/experiments.ts';
import type { StoreDb } from '../store-db.ts';
import { id, name } from './fields.ts';
import { parseInput } from './parse-input.ts';

export interface ExperimentWithArms {
  readonly experiment: Experiment;
  /** By name from getExperiment and setArmWeights (the router's order); by position from createExperiment. */
  readonly arms: ExperimentArm[];
}

const weight = z.number().nonnegative().max(1e9);

const experimentRefSchema = z.union([z.object({ experimentId: id }), z.object({ name })]);
export type ExperimentRef = z.input<typeof experimentRefSchema>;

export async function getExperiment(db: StoreDb, input: ExperimentRef): Promise<ExperimentWithArms> {
  const ref = parseInput(experimentRefSchema, input, 'experiment');
  const [experiment] = await db
    .select()
    .from(experiments)
    .where('experimentId' in ref ? eq(experiments.id, ref.experimentId) : eq(experiments.name, ref.name));
  if (!experiment) {
    throw new StoreError(
      'not-found',
      `experiment ${'experimentId' in ref ? ref.experimentId : `"${ref.name}"`} does not exist`,
    );
  }
  const arms = await db
    .select()
    .from(experimentArms)
    .where(eq(experimentArms.experimentId, experiment.id))
    .orderBy(asc(experimentArms.name));
  return { experiment, arms };
}

const listExperimentsSchema = z.object({
  status: z.enum(experimentStatuses).optional(),
  policyId: id.optional(),
});
export type ListExperimentsInput = z.input<typeof listExperimentsSchema>;

/** Experiments, newest first. */
export async function listExperiments(db: StoreDb, input: ListExperimentsInput = {}): Promise<Experiment[]> {
  const query = parseInput(listExperimentsSchema, input, 'listExperiments');
  return db
    .select()
    .from(experiments)
    .where(
      and(
        query.status ? eq(experiments.status, query.status) : undefined,
        query.policyId ? eq(experiments.policyId, query.policyId) : undefined,
      ),
    )
    .orderBy(desc(experiments.createdAt));
}

const setArmWeightsSchema = z.object({
  experimentId: id,
  /** Arm name → new weight; arms not listed keep theirs. */
  weights: z
    .record(z.string().min(1), weight)
    .refine((weights) => Object.keys(weights).length > 0, 'name at least one arm'),
});
export type SetArmWeightsInput = z.input<typeof setArmWeightsSchema>;

export async function setArmWeights(db: StoreDb, input: SetArmWeightsInput): Promise<ExperimentWithArms> {
  const request = parseInput(setArmWeightsSchema, input, 'setArmWeights');
  return db.transaction(async (tx) => {
    const current = await getExperiment(tx, { experimentId: request.experimentId });
    const armNames = new Set(current.arms.map((arm) => arm.name));
    const unknown = Object.keys(request.weights).filter((armName) => !armNames.has(armName));
    if (unknown.length > 0) {
      throw new StoreError(
        'validation',
        `setArmWeights: weights.${unknown[0]}: no such arm in ${current.experiment.name}`,
      );
    }
    const total = current.arms.reduce((sum, arm) => sum + (request.weights[arm.name] ?? arm.weight), 0);
    if (total <= 0)
      throw new StoreError('validation', 'setArmWeights: weights: at least one arm needs a weight above 0');
    for (const [armName, armWeight] of Object.entries(request.weights)) {
      await tx
        .update(experimentArms)
        .set({ weight: armWeight })
        .where(and(eq(experimentArms.experimentId, request.experimentId), eq(experimentArms.name, armName)));
    }
    return getExperiment(tx, { experimentId: request.experimentId });
  });
}

export async function stopExperiment(db: StoreDb, experimentId: string): Promise<Experiment> {
  const key = parseInput(id, experimentId, 'experimentId');
  const [stopped] = await db
    .update(experiments)
    .set({ status: 'stopped', stoppedAt: sql`coalesce(${experiments.stoppedAt}, now())` })
    .where(eq(experiments.id, key))
    .returning();
  if (!stopped) throw new StoreError('not-found', `experiment ${key} does not exist`);
  return stopped;
}
