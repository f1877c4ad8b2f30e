// Creating an A/B experiment, the one way there is (`edgerl ab create`, the trainer's --ab-test, the
// demo): two or more published versions of one policy, positive weights stored normalised to sum 1,
// arms numbered in the order given (position 0 is the control), the metric and the sample size the
// report waits for. Arms never change afterwards, which keeps assignment sticky. Reading is elsewhere.
import { eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { isUuidLike } from '../../protocol/is-uuid-like.ts';
import { StoreError } from '../errors.ts';
import { experimentArms } from '../schema/experiment-arms.ts';
import { experiments } from '../schema/experiments.ts';
import { policyVersions } from '../schema/policies.ts';
import { defaultMinSamples, experimentMetrics } from '../store-constants.ts';
import type { StoreDb } from '../store-db.ts';
import type { ExperimentWithArms } from './experiments.ts';
import { id, name } from './fields.ts';
import { parseInput } from './parse-input.ts';

/** Experiment names appear in commands and in the edge's `experiment` field (where a UUID means an id). */
export const experimentName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
    'letters, digits, ".", "_" or "-", starting with a letter or digit',
  )
  .refine((value) => !isUuidLike(value), 'must not look like an id (a UUID)');

const createExperimentSchema = z.object({
  name: experimentName,
  description: z.string().max(2000).optional(),
  metric: z.enum(experimentMetrics).default('reward'),
  /** Rewarded trajectories per arm before a verdict; Welch's test needs at least 2. */
  minSamples: z.number().int().min(2).max(100_000_000).default(defaultMinSamples),
  arms: z
    .array(
      z.object({
        policyVersionId: id,
        /** Relative share of traffic; stored divided by the sum of the weights. */
        weight: z.number().positive().max(1e9).default(1),
        /** Default: the version's served name (agent@3). */
        name: name.optional(),
      }),
    )
    .min(2, 'an experiment needs at least two arms')
    .max(100),
});
export type CreateExperimentInput = z.input<typeof createExperimentSchema>;

/** The experiment and its arms in position order: the control first. */
export async function createExperiment(
  db: StoreDb,
  input: CreateExperimentInput,
): Promise<ExperimentWithArms> {
  const request = parseInput(createExperimentSchema, input, 'createExperiment');
  return db.transaction(async (tx) => {
    const [taken] = await tx
      .select({ id: experiments.id })
      .from(experiments)
      .where(eq(experiments.name, request.name));
    if (taken) throw new StoreError('conflict', `experiment "${request.name}" already exists`);

    const ids = request.arms.map((arm) => arm.policyVersionId);
    const versions = await tx.select().from(policyVersions).where(inArray(policyVersions.id, ids));
    const byId = new Map(versions.map((version) => [version.id, version]));
    const seenNames = new Set<string>();
    const arms = request.arms.map((arm, index) => {
      const version = byId.get(arm.policyVersionId);
      if (!version)
        throw new StoreError('not-found', `arms.${index}: version ${arm.policyVersionId} does not exist`);
      // One version in two arms is allowed only under names that tell them apart (an A/A comparison:
      // the demo's start and final when RL published nothing); arms named after their version cannot.
      const armName = arm.name ?? version.adapterName;
      if (seenNames.has(armName)) {
        throw new StoreError(
          'validation',
          arm.name === undefined
            ? `arms.${index}: ${version.adapterName} is already an arm of this experiment`
            : `arms.${index}.name: "${armName}" is already an arm's name`,
        );
      }
      seenNames.add(armName);
      if (version.status !== 'published') {
        throw new StoreError(
          'conflict',
          `arms.${index}: ${version.adapterName} is ${version.status}; only a published version can take traffic`,
        );
      }
      return { version, name: armName, weight: arm.weight };
    });
    const policyId = arms[0]?.version.policyId ?? '';
    const stranger = arms.find((arm) => arm.version.policyId !== policyId);
    if (stranger) {
      throw new StoreError(
        'validation',
        `arms: ${stranger.version.adapterName} belongs to another policy than ${arms[0]?.version.adapterName}; an experiment compares versions of one policy`,
      );
    }

    const [experiment] = await tx
      .insert(experiments)
      .values({
        name: request.name,
        policyId,
        description: request.description ?? null,
        metric: request.metric,
        minSamples: request.minSamples,
      })
      .returning();
    if (!experiment) throw new Error('insert returned no row');
    const total = arms.reduce((sum, arm) => sum + arm.weight, 0);
    const stored = await tx
      .insert(experimentArms)
      .values(
        arms.map((arm, position) => ({
          experimentId: experiment.id,
          name: arm.name,
          policyVersionId: arm.version.id,
          weight: arm.weight / total,
          position,
        })),
      )
      .returning();
    return { experiment, arms: stored.sort((a, b) => a.position - b.position) };
  });
}
