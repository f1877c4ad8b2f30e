// Creating an A/B experiment as `edgerl ab create` does: two or more published versions of one
// policy, positive weights stored normalised to sum 1, each arm named after its version's served
// name and numbered in the order given (position 0 is the control), plus the metric and the sample
// size the report waits for. Arms never change afterwards, which keeps assignment sticky.
import { eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type ExperimentArm, experimentArms } from '../schema/experiment-arms.ts';
import { type Experiment, experimentMetrics, experiments } from '../schema/experiments.ts';
import { policyVersions } from '../schema/policies.ts';
import type { StoreDb } from '../store-db.ts';
import { createExperiment } from './experiments.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const uuidLike = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Experiment names appear in commands and in the edge's `experiment` field (where a UUID means an id). */
export const experimentName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
    'letters, digits, ".", "_" or "-", starting with a letter or digit',
  )
  .refine((value) => !uuidLike.test(value), 'must not look like an id (a UUID)');

const createAbExperimentSchema = z.object({
  name: experimentName,
  description: z.string().max(2000).optional(),
  metric: z.enum(experimentMetrics).default('reward'),
  /** Rewarded trajectories per arm before a verdict; Welch's test needs at least 2. */
  minSamples: z.number().int().min(2).max(100_000_000),
  arms: z
    .array(z.object({ policyVersionId: id, weight: z.number().positive().max(1e9) }))
    .min(2, 'an experiment needs at least two arms')
    .max(100),
});
export type CreateAbExperimentInput = z.input<typeof createAbExperimentSchema>;

export interface AbExperiment {
  readonly experiment: Experiment;
  /** In position order: the control first. */
  readonly arms: ExperimentArm[];
}

export async function createAbExperiment(db: StoreDb, input: CreateAbExperimentInput): Promise<AbExperiment> {
  const request = parseInput(createAbExperimentSchema, input, 'createAbExperiment');
  return db.transaction(async (tx) => {
    const [taken] = await tx
      .select({ id: experiments.id })
      .from(experiments)
      .where(eq(experiments.name, request.name));
    if (taken) throw new StoreError('conflict', `experiment "${request.name}" already exists`);

    const ids = request.arms.map((arm) => arm.policyVersionId);
    const versions = await tx.select().from(policyVersions).where(inArray(policyVersions.id, ids));
    const byId = new Map(versions.map((version) => [version.id, version]));
    const seen = new Set<string>();
    const arms = request.arms.map((arm, index) => {
      const version = byId.get(arm.policyVersionId);
      if (!version)
        throw new StoreError('not-found', `arms.${index}: version ${arm.policyVersionId} does not exist`);
      if (seen.has(version.id)) {
        throw new StoreError(
          'validation',
          `arms.${index}: ${version.adapterName} is already an arm of this experiment`,
        );
      }
      seen.add(version.id);
      if (version.status !== 'published') {
        throw new StoreError(
          'conflict',
          `arms.${index}: ${version.adapterName} is ${version.status}; only a published version can take traffic`,
        );
      }
      return { version, weight: arm.weight };
    });
    const policyId = arms[0]?.version.policyId ?? '';
    const stranger = arms.find((arm) => arm.version.policyId !== policyId);
    if (stranger) {
      throw new StoreError(
        'validation',
        `arms: ${stranger.version.adapterName} belongs to another policy than ${arms[0]?.version.adapterName}; an experiment compares versions of one policy`,
      );
    }

    const total = arms.reduce((sum, arm) => sum + arm.weight, 0);
    const created = await createExperiment(tx, {
      name: request.name,
      policyId,
      description: request.description,
      arms: arms.map((arm) => ({
        name: arm.version.adapterName,
        policyVersionId: arm.version.id,
        weight: arm.weight / total,
      })),
    });
    const [experiment] = await tx
      .update(experiments)
      .set({ metric: request.metric, minSamples: request.minSamples })
      .where(eq(experiments.id, created.experiment.id))
      .returning();
    if (!experiment) throw new Error('update returned no row');
    const ordered: ExperimentArm[] = [];
    for (const [position, arm] of arms.entries()) {
      const stored = created.arms.find((candidate) => candidate.policyVersionId === arm.version.id);
      if (!stored) throw new Error(`created arm for ${arm.version.adapterName} not returned`);
      const [updated] = await tx
        .update(experimentArms)
        .set({ position })
        .where(eq(experimentArms.id, stored.id))
        .returning();
      if (!updated) throw new Error('update returned no row');
      ordered.push(updated);
    }
    return { experiment, arms: ordered };
  });
}
