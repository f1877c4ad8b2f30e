// Promoting an experiment's arm: its version becomes the policy's default (what requests naming the
// policy but no version get), the change is written to policy_default_changes so it can be rolled
// back, and the experiment stops taking traffic. One transaction, the policy row locked, so concurrent
// promotes and rollbacks of one policy queue up instead of interleaving.
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { experimentArms } from '../schema/experiment-arms.ts';
import { type Experiment, experiments } from '../schema/experiments.ts';
import { policies, type PolicyVersion, policyVersions } from '../schema/policies.ts';
import { type PolicyDefaultChange, policyDefaultChanges } from '../schema/policy-default-changes.ts';
import type { StoreDb } from '../store-db.ts';
import { setDefaultVersion } from './default-version.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const promoteArmSchema = z.object({
  experimentId: id,
  armId: id,
  /** The inference replicas the edge routes to, when known: the version must be ready on one. */
  fleet: z.array(z.string().min(1).max(2000)).max(1000).optional(),
});
export type PromoteArmInput = z.input<typeof promoteArmSchema>;

export interface PromoteArmResult {
  readonly policyName: string;
  /** The default before; undefined when the policy had none. */
  readonly previous: PolicyVersion | undefined;
  readonly promoted: PolicyVersion;
  /** Undefined when the version already was the default (nothing to record). */
  readonly change: PolicyDefaultChange | undefined;
  /** The experiment afterwards (stopped). */
  readonly experiment: Experiment;
}

export async function promoteArm(db: StoreDb, input: PromoteArmInput): Promise<PromoteArmResult> {
  const request = parseInput(promoteArmSchema, input, 'promoteArm');
  return db.transaction(async (tx) => {
    const [arm] = await tx.select().from(experimentArms).where(eq(experimentArms.id, request.armId));
    if (!arm || arm.experimentId !== request.experimentId) {
      throw new StoreError(
        'not-found',
        `arm ${request.armId} is not an arm of experiment ${request.experimentId}`,
      );
    }
    const [found] = await tx.select().from(experiments).where(eq(experiments.id, request.experimentId));
    if (!found) throw new StoreError('not-found', `experiment ${request.experimentId} does not exist`);
    const [policy] = await tx.select().from(policies).where(eq(policies.id, found.policyId)).for('update');
    if (!policy) throw new StoreError('not-found', `policy ${found.policyId} does not exist`);
    const [previous] = policy.defaultVersionId
      ? await tx.select().from(policyVersions).where(eq(policyVersions.id, policy.defaultVersionId))
      : [];
    const promoted = await setDefaultVersion(tx, {
      policyId: policy.id,
      versionId: arm.policyVersionId,
      ...(request.fleet ? { fleet: request.fleet } : {}),
    });
    let change: PolicyDefaultChange | undefined;
    if (previous?.id !== promoted.id) {
      [change] = await tx
        .insert(policyDefaultChanges)
        .values({
          policyId: policy.id,
          action: 'promote',
          fromVersionId: previous?.id ?? null,
          toVersionId: promoted.id,
          experimentId: found.id,
          // clock_timestamp, not now(): the order rollback walks is the order the policy lock was taken.
          createdAt: sql`clock_timestamp()`,
        })
        .returning();
    }
    const [experiment] = await tx
      .update(experiments)
      .set({ status: 'stopped', stoppedAt: sql`coalesce(${experiments.stoppedAt}, now())` })
      .where(eq(experiments.id, found.id))
      .returning();
    if (!experiment) throw new Error('update returned no row');
    return { policyName: policy.name, previous, promoted, change, experiment };
  });
}
