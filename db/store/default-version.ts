// A policy's default version (what requests naming no version get), and resolving the model name a
// request carries: an adapter name (`agent@7`) picks that version, a policy name (`agent`) its default.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { policies, type PolicyVersion, policyVersions } from '../schema/policies.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { getPolicy, type PolicyRef } from './policies.ts';
import { readyOnFleet } from './publications.ts';

const setDefaultVersionSchema = z.object({
  policyId: id,
  versionId: id,
  /** The inference replicas traffic goes to, when the caller knows the fleet (readyOnFleet). */
  fleet: z.array(z.string().min(1).max(2000)).max(1000).optional(),
});
export type SetDefaultVersionInput = z.input<typeof setDefaultVersionSchema>;

/**
 * Points the policy at a published version of its own (A/B promote and rollback). A version that no
 * replica serves is never the default: one published through the fleet needs a `ready` replica (of
 * `fleet`, when given), else `conflict` (publications.ts, readyOnFleet).
 */
export async function setDefaultVersion(db: StoreDb, input: SetDefaultVersionInput): Promise<PolicyVersion> {
  const request = parseInput(setDefaultVersionSchema, input, 'setDefaultVersion');
  return db.transaction(async (tx) => {
    const [version] = await tx.select().from(policyVersions).where(eq(policyVersions.id, request.versionId));
    if (!version) throw new StoreError('not-found', `policy version ${request.versionId} does not exist`);
    if (version.policyId !== request.policyId) {
      throw new StoreError(
        'validation',
        `setDefaultVersion: versionId: ${version.adapterName} belongs to another policy`,
      );
    }
    if (version.status !== 'published') {
      throw new StoreError(
        'conflict',
        `${version.adapterName} is ${version.status}; only a published version can be the default`,
      );
    }
    const served = await readyOnFleet(tx, version, request.fleet);
    if (!served.ok) throw new StoreError('conflict', served.reason);
    const updated = await tx
      .update(policies)
      .set({ defaultVersionId: version.id })
      .where(eq(policies.id, request.policyId))
      .returning({ id: policies.id });
    if (updated.length === 0) throw new StoreError('not-found', `policy ${request.policyId} does not exist`);
    return version;
  });
}

/** The policy's default version, or undefined when it has none yet. */
export async function getDefaultVersion(db: StoreDb, ref: PolicyRef): Promise<PolicyVersion | undefined> {
  const policy = await getPolicy(db, ref);
  if (!policy.defaultVersionId) return undefined;
  const [version] = await db
    .select()
    .from(policyVersions)
    .where(eq(policyVersions.id, policy.defaultVersionId));
  return version;
}

/**
 * The version a request's `model` names: an exact adapter name first, else a policy name's default.
 * Undefined when neither matches (the edge answers 404 / "unknown model").
 */
export async function resolvePolicyVersion(
  db: StoreDb,
  modelName: string,
): Promise<PolicyVersion | undefined> {
  const name = parseInput(z.string().min(1).max(300), modelName, 'modelName');
  const [byAdapter] = await db.select().from(policyVersions).where(eq(policyVersions.adapterName, name));
  if (byAdapter) return byAdapter;
  const [byPolicy] = await db
    .select({ version: policyVersions })
    .from(policies)
    .innerJoin(policyVersions, eq(policyVersions.id, policies.defaultVersionId))
    .where(eq(policies.name, name));
  return byPolicy?.version;
}
