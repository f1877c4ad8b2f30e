// Which trained versions a request can be routed to now, and so must stay loaded on every replica:
// each policy's default, the version its rollback would restore (the `from` of its newest promote not
// yet undone: rollback-default-version.ts), every running experiment's arms, and the newest
// `keepNewest` published versions per policy. The others that are published or retired may be
// unloaded (trainer/train/retain-adapters.ts); a version still `training` is being published and is
// never offered. Also removes one replica's row of an unloaded version (retention's mark: a version
// with no row on a replica is neither routed there nor loaded there again by catch-up).
import { and, desc, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { isBaseVersion } from '../../protocol/base-version.ts';
import { replicaName } from '../../protocol/replica-url.ts';
import { experimentArms } from '../schema/experiment-arms.ts';
import { experiments } from '../schema/experiments.ts';
import { policies, type PolicyVersion, policyVersions } from '../schema/policies.ts';
import { policyDefaultChanges } from '../schema/policy-default-changes.ts';
import { publications } from '../schema/publications.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const routableSchema = z.object({
  policyName: z.string().min(1).max(100).optional(),
  keepNewest: z.number().int().min(1).max(100_000),
});
export type RoutableVersionsInput = z.input<typeof routableSchema>;

/** Why a version stays loaded; the first reason that applies. */
export type RoutableReason = 'default' | 'rollback-target' | 'experiment-arm' | 'newest';

export interface RoutableVersions {
  /** Versions with an adapter that must stay loaded, with why. */
  readonly routable: readonly { readonly version: PolicyVersion; readonly reason: RoutableReason }[];
  /** Published or retired versions with an adapter that nothing routes to: unload them. */
  readonly unroutable: readonly PolicyVersion[];
}

/** The rule on its own, pure: which of `versions` stay, given the store's facts. */
export function pickRoutable(
  versions: readonly PolicyVersion[],
  facts: {
    readonly defaults: ReadonlySet<string>;
    readonly rollbackTargets: ReadonlySet<string>;
    readonly arms: ReadonlySet<string>;
    readonly keepNewest: number;
  },
): RoutableVersions {
  const newest = new Set<string>();
  const byPolicy = new Map<string, PolicyVersion[]>();
  for (const version of versions) {
    if (version.status !== 'published') continue;
    byPolicy.set(version.policyId, [...(byPolicy.get(version.policyId) ?? []), version]);
  }
  for (const list of byPolicy.values()) {
    for (const version of [...list].sort((a, b) => b.version - a.version).slice(0, facts.keepNewest)) {
      newest.add(version.id);
    }
  }
  const routable: { version: PolicyVersion; reason: RoutableReason }[] = [];
  const unroutable: PolicyVersion[] = [];
  for (const version of versions) {
    const reason: RoutableReason | undefined = facts.defaults.has(version.id)
      ? 'default'
      : facts.rollbackTargets.has(version.id)
        ? 'rollback-target'
        : facts.arms.has(version.id)
          ? 'experiment-arm'
          : newest.has(version.id)
            ? 'newest'
            : undefined;
    if (reason) routable.push({ version, reason });
    else if (version.status !== 'training') unroutable.push(version);
  }
  return { routable, unroutable };
}

export async function routableVersions(db: StoreDb, input: RoutableVersionsInput): Promise<RoutableVersions> {
  const request = parseInput(routableSchema, input, 'routableVersions');
  const policyRows = await db
    .select()
    .from(policies)
    .where(request.policyName ? eq(policies.name, request.policyName) : undefined);
  const policyIds = policyRows.map((policy) => policy.id);
  if (policyIds.length === 0) return { routable: [], unroutable: [] };
  const versions = (
    await db
      .select()
      .from(policyVersions)
      .where(and(inArray(policyVersions.policyId, policyIds), isNotNull(policyVersions.adapterUri)))
  ).filter((version) => !isBaseVersion(version));
  const arms = await db
    .select({ versionId: experimentArms.policyVersionId })
    .from(experimentArms)
    .innerJoin(experiments, eq(experiments.id, experimentArms.experimentId))
    .where(and(eq(experiments.status, 'running'), inArray(experiments.policyId, policyIds)));
  // Per policy, the newest promote no rollback has undone: its `from` is what a rollback restores.
  const undo = alias(policyDefaultChanges, 'undo');
  const promotes = await db
    .selectDistinctOn([policyDefaultChanges.policyId], { from: policyDefaultChanges.fromVersionId })
    .from(policyDefaultChanges)
    .leftJoin(undo, eq(undo.revertsChangeId, policyDefaultChanges.id))
    .where(
      and(
        inArray(policyDefaultChanges.policyId, policyIds),
        eq(policyDefaultChanges.action, 'promote'),
        sql`${undo.id} is null`,
      ),
    )
    .orderBy(policyDefaultChanges.policyId, desc(policyDefaultChanges.createdAt));
  return pickRoutable(versions, {
    defaults: new Set(
      policyRows.flatMap((policy) => (policy.defaultVersionId ? [policy.defaultVersionId] : [])),
    ),
    rollbackTargets: new Set(promotes.flatMap((row) => (row.from ? [row.from] : []))),
    arms: new Set(arms.map((arm) => arm.versionId)),
    keepNewest: request.keepNewest,
  });
}

const removeSchema = z.object({ versionId: id, replica: z.string().min(1).max(2000).transform(replicaName) });
export type RemovePublicationInput = z.input<typeof removeSchema>;

/** Deletes one (version, replica) row: retention unloaded the version there. Returns whether one existed. */
export async function removePublication(db: StoreDb, input: RemovePublicationInput): Promise<boolean> {
  const request = parseInput(removeSchema, input, 'removePublication');
  const rows = await db
    .delete(publications)
    .where(
      and(eq(publications.policyVersionId, request.versionId), eq(publications.replica, request.replica)),
    )
    .returning({ replica: publications.replica });
  return rows.length > 0;
}
