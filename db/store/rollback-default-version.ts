// Rolling a policy's default version back: undoes the newest promote that no rollback has undone yet,
// so each rollback steps one promote further back. Refused when the default has moved since that
// promote by other means (the history would not describe what is served), or when there was no
// default before it.
import { and, desc, eq, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { policies, type PolicyVersion, policyVersions } from '../schema/policies.ts';
import { type PolicyDefaultChange, policyDefaultChanges } from '../schema/policy-default-changes.ts';
import type { StoreDb } from '../store-db.ts';
import { setDefaultVersion } from './default-version.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const rollbackSchema = z.object({
  policyId: id,
  /** The inference replicas the edge routes to, when known: the version must be ready on one. */
  fleet: z.array(z.string().min(1).max(2000)).max(1000).optional(),
});
export type RollbackDefaultVersionInput = z.input<typeof rollbackSchema>;

export interface RollbackDefaultVersionResult {
  readonly policyName: string;
  /** The default that was undone. */
  readonly from: PolicyVersion;
  /** The default now. */
  readonly to: PolicyVersion;
  readonly change: PolicyDefaultChange;
}

export async function rollbackDefaultVersion(
  db: StoreDb,
  input: RollbackDefaultVersionInput,
): Promise<RollbackDefaultVersionResult> {
  const request = parseInput(rollbackSchema, input, 'rollbackDefaultVersion');
  return db.transaction(async (tx) => {
    const [policy] = await tx.select().from(policies).where(eq(policies.id, request.policyId)).for('update');
    if (!policy) throw new StoreError('not-found', `policy ${request.policyId} does not exist`);
    const undo = alias(policyDefaultChanges, 'undo');
    const [promote] = await tx
      .select({ change: policyDefaultChanges })
      .from(policyDefaultChanges)
      .leftJoin(undo, eq(undo.revertsChangeId, policyDefaultChanges.id))
      .where(
        and(
          eq(policyDefaultChanges.policyId, policy.id),
          eq(policyDefaultChanges.action, 'promote'),
          sql`${undo.id} is null`,
        ),
      )
      .orderBy(desc(policyDefaultChanges.createdAt))
      .limit(1);
    if (!promote)
      throw new StoreError('conflict', `policy "${policy.name}" has no promote left to roll back`);
    const versionName = async (versionId: string) => {
      const [row] = await tx.select().from(policyVersions).where(eq(policyVersions.id, versionId));
      if (!row) throw new StoreError('not-found', `policy version ${versionId} does not exist`);
      return row;
    };
    const promoted = await versionName(promote.change.toVersionId);
    if (policy.defaultVersionId !== promoted.id) {
      const current = policy.defaultVersionId
        ? (await versionName(policy.defaultVersionId)).adapterName
        : 'none';
      throw new StoreError(
        'conflict',
        `the default of "${policy.name}" is ${current}, not ${promoted.adapterName} as its last promote left it; it was changed outside edgerl ab, so there is nothing to roll back`,
      );
    }
    if (!promote.change.fromVersionId) {
      throw new StoreError(
        'conflict',
        `"${policy.name}" had no default version before ${promoted.adapterName} was promoted; nothing to roll back to`,
      );
    }
    const restored = await setDefaultVersion(tx, {
      policyId: policy.id,
      versionId: promote.change.fromVersionId,
      ...(request.fleet ? { fleet: request.fleet } : {}),
    });
    const [change] = await tx
      .insert(policyDefaultChanges)
      .values({
        policyId: policy.id,
        action: 'rollback',
        fromVersionId: promoted.id,
        toVersionId: restored.id,
        experimentId: promote.change.experimentId,
        revertsChangeId: promote.change.id,
        createdAt: sql`clock_timestamp()`,
      })
      .returning();
    if (!change) throw new Error('insert returned no row');
    return { policyName: policy.name, from: promoted, to: restored, change };
  });
}
