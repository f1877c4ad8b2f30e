// Every policy with its versions (parent → child), the run that trained each and that run's state,
// and the history of its default version (promotes and rollbacks): the console's policies page.
// Read-only; where versions are served is listPublications, experiments are listAbExperiments.
import { asc, desc, eq, inArray } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { DefaultChangeAction } from '../schema/policy-default-changes.ts';
import {
  type Policy,
  type PolicyVersion,
  policies,
  policyVersions,
  type TrainingRunStatus,
  trainingRuns,
} from '../schema/policies.ts';
import { policyDefaultChanges } from '../schema/policy-default-changes.ts';
import { experiments } from '../schema/experiments.ts';
import type { StoreDb } from '../store-db.ts';

export interface LineageVersion extends PolicyVersion {
  readonly trainingRunStatus: TrainingRunStatus | null;
}

export interface DefaultChangeRecord {
  readonly id: string;
  readonly action: DefaultChangeAction;
  readonly fromAdapterName: string | null;
  readonly toAdapterName: string;
  readonly experimentName: string | null;
  /** True for a promote that a later rollback undid. */
  readonly undone: boolean;
  readonly createdAt: Date;
}

export interface PolicyLineage {
  readonly policy: Policy;
  /** In version order. */
  readonly versions: LineageVersion[];
  /** Newest first. */
  readonly defaultChanges: DefaultChangeRecord[];
}

export async function policyLineage(db: StoreDb): Promise<PolicyLineage[]> {
  const policyRows = await db.select().from(policies).orderBy(asc(policies.name));
  if (policyRows.length === 0) return [];
  const versionRows = await db
    .select({ version: policyVersions, trainingRunStatus: trainingRuns.status })
    .from(policyVersions)
    .leftJoin(trainingRuns, eq(trainingRuns.id, policyVersions.trainingRunId))
    .orderBy(asc(policyVersions.policyId), asc(policyVersions.version));
  const from = alias(policyVersions, 'from_version');
  const to = alias(policyVersions, 'to_version');
  const undo = alias(policyDefaultChanges, 'undo');
  const changeRows = await db
    .select({
      change: policyDefaultChanges,
      fromAdapterName: from.adapterName,
      toAdapterName: to.adapterName,
      experimentName: experiments.name,
      undoneBy: undo.id,
    })
    .from(policyDefaultChanges)
    .innerJoin(to, eq(to.id, policyDefaultChanges.toVersionId))
    .leftJoin(from, eq(from.id, policyDefaultChanges.fromVersionId))
    .leftJoin(experiments, eq(experiments.id, policyDefaultChanges.experimentId))
    .leftJoin(undo, eq(undo.revertsChangeId, policyDefaultChanges.id))
    .where(
      inArray(
        policyDefaultChanges.policyId,
        policyRows.map((policy) => policy.id),
      ),
    )
    .orderBy(desc(policyDefaultChanges.createdAt));
  return policyRows.map((policy) => ({
    policy,
    versions: versionRows
      .filter((row) => row.version.policyId === policy.id)
      .map((row) => ({ ...row.version, trainingRunStatus: row.trainingRunStatus })),
    defaultChanges: changeRows
      .filter((row) => row.change.policyId === policy.id)
      .map((row) => ({
        id: row.change.id,
        action: row.change.action,
        fromAdapterName: row.fromAdapterName,
        toAdapterName: row.toAdapterName,
        experimentName: row.experimentName,
        undone: row.undoneBy !== null,
        createdAt: row.change.createdAt,
      })),
  }));
}
