// The end of a trainer cycle, all or nothing: the new policy version becomes `published` (and the
// default, when asked; a cycle whose groups all lacked signal has no version), every group the version was trained on becomes `trained` by the run (groups
// that carried no signal too, with the reason kept), and per-trajectory training notes (tokenization
// drift) are merged into the trajectories' metadata. One transaction, so a trainer killed at any
// point either finished all of it or none, and a group is never marked without the version that
// includes it; a version is published only by the holder of its policy's lease. With a fleet, the
// replicas that verified the version become `ready` in the same transaction (publications.ts), so a
// version is never published without the replicas that serve it, nor served before it is published.
// Also: noting why a publication failed on the unpublished version.
import { eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { metadataSchema } from '../schema/json.ts';
import { type PolicyVersion, policyVersions } from '../schema/policies.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id, leaseOwner } from './fields.ts';
import { markGroupsTrained } from './mark-groups-trained.ts';
import { parseInput } from './parse-input.ts';
import { assertPolicyLease } from './policy-leases.ts';
import { publishPolicyVersion } from './policy-versions.ts';
import { commitPublications } from './publications.ts';

const commitTrainingCycleSchema = z.object({
  owner: leaseOwner,
  /** The version to publish; absent when the cycle trained nothing (only groups without signal). */
  versionId: id.optional(),
  /** Where the published adapter lives (a path or URL). */
  adapterUri: z.string().min(1).max(2000).optional(),
  makeDefault: z.boolean().default(false),
  /**
   * Fleet publication's commit: the replicas that verified the version (their `verified` rows become
   * `ready` here, in the same transaction as the version's publication) and the fleet they belong
   * to (a default must be ready on one of it). Absent: no replica rows are touched.
   */
  replicas: z
    .object({
      acknowledged: z.array(z.string().min(1).max(2000)).min(1).max(1000),
      fleet: z.array(z.string().min(1).max(2000)).min(1).max(1000),
    })
    .optional(),
  trainingRunId: id.optional(),
  /** Every group the version includes; all must be leased by `owner`. */
  groupIds: z.array(id).max(1000).default([]),
  /** Groups among `groupIds` that were consumed without a gradient, with why (`no-signal`, …). */
  groupReasons: z.record(z.string(), z.string().min(1).max(2000)).default({}),
  /** Merged into each trajectory's metadata (e.g. `{ training: { driftTokens } }`). */
  trajectoryNotes: z.record(z.string(), metadataSchema).default({}),
});
export type CommitTrainingCycleInput = z.input<typeof commitTrainingCycleSchema>;

export interface CommittedTrainingCycle {
  readonly version?: PolicyVersion;
  readonly groups: RolloutGroup[];
}

export async function commitTrainingCycle(
  db: StoreDb,
  input: CommitTrainingCycleInput,
): Promise<CommittedTrainingCycle> {
  const commit = parseInput(commitTrainingCycleSchema, input, 'commitTrainingCycle');
  const unknownReasons = Object.keys(commit.groupReasons).filter((key) => !commit.groupIds.includes(key));
  if (unknownReasons.length > 0) {
    throw new StoreError(
      'validation',
      `commitTrainingCycle: groupReasons: ${unknownReasons.join(', ')} not among groupIds`,
    );
  }
  return db.transaction(async (tx) => {
    if (commit.versionId) {
      // One lineage per policy: only the trainer holding the policy's lease publishes a version of it.
      const [target] = await tx
        .select({ policyId: policyVersions.policyId })
        .from(policyVersions)
        .where(eq(policyVersions.id, commit.versionId));
      if (!target) throw new StoreError('not-found', `policy version ${commit.versionId} does not exist`);
      await assertPolicyLease(tx, [target.policyId], commit.owner);
    }
    if (commit.versionId && commit.replicas) {
      const ready = await commitPublications(tx, commit.versionId, commit.replicas.acknowledged);
      if (ready.length === 0) {
        throw new StoreError(
          'conflict',
          `commitTrainingCycle: none of ${commit.replicas.acknowledged.join(', ')} has verified version ${commit.versionId}`,
        );
      }
    }
    const version = commit.versionId
      ? await publishPolicyVersion(tx, {
          versionId: commit.versionId,
          adapterUri: commit.adapterUri,
          makeDefault: commit.makeDefault,
          ...(commit.replicas ? { fleet: commit.replicas.fleet } : {}),
        })
      : undefined;
    let groups: RolloutGroup[] = [];
    if (commit.groupIds.length > 0) {
      groups = await markGroupsTrained(tx, {
        owner: commit.owner,
        groupIds: commit.groupIds,
        trainingRunId: commit.trainingRunId,
      });
      for (const [groupId, reason] of Object.entries(commit.groupReasons)) {
        await tx.update(rolloutGroups).set({ statusReason: reason }).where(eq(rolloutGroups.id, groupId));
      }
    }
    const noted = Object.entries(commit.trajectoryNotes);
    if (noted.length > 0) {
      const found = await tx
        .select({ id: trajectories.id })
        .from(trajectories)
        .where(
          inArray(
            trajectories.id,
            noted.map(([trajectoryId]) => trajectoryId),
          ),
        );
      const present = new Set(found.map((row) => row.id));
      const missing = noted.map(([trajectoryId]) => trajectoryId).filter((key) => !present.has(key));
      if (missing.length > 0) {
        throw new StoreError('not-found', `trajectory ${missing.join(', ')} does not exist`);
      }
      for (const [trajectoryId, note] of noted) {
        await tx
          .update(trajectories)
          .set({ metadata: sql`${trajectories.metadata} || ${JSON.stringify(note)}::jsonb` })
          .where(eq(trajectories.id, trajectoryId));
      }
    }
    const ordered = groups.sort((a, b) => commit.groupIds.indexOf(a.id) - commit.groupIds.indexOf(b.id));
    return { ...(version ? { version } : {}), groups: ordered };
  });
}

const recordPublishFailureSchema = z.object({
  versionId: id,
  reason: z.string().min(1).max(2000),
});
export type RecordPublishFailureInput = z.input<typeof recordPublishFailureSchema>;

/**
 * Notes on a version that is still `training` why it could not be published (its metadata gets
 * `publishError` and `publishFailedAt`); the policy's default is untouched, so the previous version
 * keeps serving. A published or retired version is a `conflict`.
 */
export async function recordPublishFailure(
  db: StoreDb,
  input: RecordPublishFailureInput,
): Promise<PolicyVersion> {
  const failure = parseInput(recordPublishFailureSchema, input, 'recordPublishFailure');
  return db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(policyVersions)
      .where(eq(policyVersions.id, failure.versionId))
      .for('update');
    if (!current) throw new StoreError('not-found', `policy version ${failure.versionId} does not exist`);
    if (current.status !== 'training') {
      throw new StoreError('conflict', `policy version ${current.adapterName} is already ${current.status}`);
    }
    const note = { publishError: failure.reason, publishFailedAt: new Date().toISOString() };
    const [updated] = await tx
      .update(policyVersions)
      .set({ metadata: sql`${policyVersions.metadata} || ${JSON.stringify(note)}::jsonb` })
      .where(eq(policyVersions.id, current.id))
      .returning();
    if (!updated) throw new Error('update returned no row');
    return updated;
  });
}
