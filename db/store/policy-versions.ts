// Policy versions: register one (status `training`, numbered 0, 1, 2, … per policy, adapter named
// `<policy>@<version>` unless given), publish it, retire it.
import { eq, max, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { metadataSchema } from '../schema/json.ts';
import { policies, type PolicyVersion, policyVersions } from '../schema/policies.ts';
import type { StoreDb } from '../store-db.ts';
import { id, nonNegativeInt4 } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { setDefaultVersion } from './default-version.ts';

const registerPolicyVersionSchema = z.object({
  policyId: id,
  /** Default: one more than the policy's highest version, or 0 for its first. */
  version: nonNegativeInt4.optional(),
  /** Default: `<policy name>@<version>`. */
  adapterName: z.string().min(1).max(300).optional(),
  /** Where the adapter files are; absent for the base weights, or until the trainer has written them. */
  adapterUri: z.string().min(1).max(2000).optional(),
  parentVersionId: id.optional(),
  trainingRunId: id.optional(),
  metadata: metadataSchema.optional(),
});
export type RegisterPolicyVersionInput = z.input<typeof registerPolicyVersionSchema>;

export async function registerPolicyVersion(
  db: StoreDb,
  input: RegisterPolicyVersionInput,
): Promise<PolicyVersion> {
  const request = parseInput(registerPolicyVersionSchema, input, 'registerPolicyVersion');
  return db.transaction(async (tx) => {
    // Locking the policy row numbers concurrent registrations one after the other.
    const [policy] = await tx.select().from(policies).where(eq(policies.id, request.policyId)).for('update');
    if (!policy) throw new StoreError('not-found', `policy ${request.policyId} does not exist`);
    const [highest] = await tx
      .select({ version: max(policyVersions.version) })
      .from(policyVersions)
      .where(eq(policyVersions.policyId, policy.id));
    const version = request.version ?? (highest?.version == null ? 0 : highest.version + 1);
    const [row] = await tx
      .insert(policyVersions)
      .values({
        policyId: policy.id,
        version,
        adapterName: request.adapterName ?? `${policy.name}@${version}`,
        adapterUri: request.adapterUri ?? null,
        parentVersionId: request.parentVersionId ?? null,
        trainingRunId: request.trainingRunId ?? null,
        metadata: request.metadata ?? {},
      })
      .returning();
    if (!row) throw new Error('insert returned no row');
    return row;
  });
}

const publishPolicyVersionSchema = z.object({
  versionId: id,
  /** Where the published adapter lives, if not recorded at registration. */
  adapterUri: z.string().min(1).max(2000).optional(),
  /** Also make it the policy's default version. */
  makeDefault: z.boolean().default(false),
  /** With makeDefault: the fleet it must be ready on (setDefaultVersion). */
  fleet: z.array(z.string().min(1).max(2000)).max(1000).optional(),
});
export type PublishPolicyVersionInput = z.input<typeof publishPolicyVersionSchema>;

/** `training` → `published` (publishing again is a no-op that may add the URI); retired versions stay retired. */
export async function publishPolicyVersion(
  db: StoreDb,
  input: PublishPolicyVersionInput,
): Promise<PolicyVersion> {
  const request = parseInput(publishPolicyVersionSchema, input, 'publishPolicyVersion');
  return db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(policyVersions)
      .where(eq(policyVersions.id, request.versionId))
      .for('update');
    if (!current) throw new StoreError('not-found', `policy version ${request.versionId} does not exist`);
    if (current.status === 'retired') {
      throw new StoreError(
        'conflict',
        `policy version ${current.adapterName} is retired; register a new version`,
      );
    }
    const [published] = await tx
      .update(policyVersions)
      .set({
        status: 'published',
        publishedAt: sql`coalesce(${policyVersions.publishedAt}, now())`,
        adapterUri: request.adapterUri ?? current.adapterUri,
      })
      .where(eq(policyVersions.id, current.id))
      .returning();
    if (!published) throw new Error('update returned no row');
    if (request.makeDefault)
      await setDefaultVersion(tx, {
        policyId: current.policyId,
        versionId: current.id,
        ...(request.fleet ? { fleet: request.fleet } : {}),
      });
    return published;
  });
}

/** Retires a version; the policy's default cannot be retired until another version replaces it. */
export async function retirePolicyVersion(db: StoreDb, versionId: string): Promise<PolicyVersion> {
  const key = parseInput(id, versionId, 'versionId');
  return db.transaction(async (tx) => {
    const [isDefault] = await tx
      .select({ name: policies.name })
      .from(policies)
      .where(eq(policies.defaultVersionId, key));
    if (isDefault) {
      throw new StoreError(
        'conflict',
        `version ${key} is the default of policy "${isDefault.name}"; set another default first`,
      );
    }
    const [retired] = await tx
      .update(policyVersions)
      .set({ status: 'retired', retiredAt: sql`coalesce(${policyVersions.retiredAt}, now())` })
      .where(eq(policyVersions.id, key))
      .returning();
    if (!retired) throw new StoreError('not-found', `policy version ${key} does not exist`);
    return retired;
  });
}
