// Resolving the policy version a person names on the command line (`edgerl ab create --arm …`): a
// version's id, its served name (`agent@3`), `<policy>@latest` (the newest published version), or a
// policy name (its default version). Unknown names are a `not-found` error that repeats the name.
import { and, desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { isUuidLike } from '../../protocol/is-uuid-like.ts';
import { StoreError } from '../errors.ts';
import { policies, type PolicyVersion, policyVersions } from '../schema/policies.ts';
import type { StoreDb } from '../store-db.ts';
import { parseInput } from './parse-input.ts';

const latestSuffix = '@latest';

export async function resolveVersionRef(db: StoreDb, reference: string): Promise<PolicyVersion> {
  const ref = parseInput(z.string().trim().min(1).max(300), reference, 'version');
  if (isUuidLike(ref)) {
    const [byId] = await db.select().from(policyVersions).where(eq(policyVersions.id, ref));
    if (byId) return byId;
  }
  const [byName] = await db.select().from(policyVersions).where(eq(policyVersions.adapterName, ref));
  if (byName) return byName;
  if (ref.endsWith(latestSuffix)) {
    const policyName = ref.slice(0, -latestSuffix.length);
    const [policy] = await db.select().from(policies).where(eq(policies.name, policyName));
    if (!policy) throw new StoreError('not-found', `version "${ref}": no policy named "${policyName}"`);
    const [latest] = await db
      .select()
      .from(policyVersions)
      .where(and(eq(policyVersions.policyId, policy.id), eq(policyVersions.status, 'published')))
      .orderBy(desc(policyVersions.version))
      .limit(1);
    if (!latest)
      throw new StoreError('not-found', `version "${ref}": ${policyName} has no published version`);
    return latest;
  }
  const [byPolicy] = await db
    .select({ version: policyVersions })
    .from(policies)
    .innerJoin(policyVersions, eq(policyVersions.id, policies.defaultVersionId))
    .where(eq(policies.name, ref));
  if (byPolicy) return byPolicy.version;
  throw new StoreError(
    'not-found',
    `version "${ref}" does not exist: give a served name (agent@3), <policy>@latest, a policy with a default version, or a version id`,
  );
}
