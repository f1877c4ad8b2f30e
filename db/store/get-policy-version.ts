// Reading one policy version by id: what the edge needs to turn an experiment arm into the adapter
// name it puts in a request's `model`.
import { eq } from 'drizzle-orm';
import { StoreError } from '../errors.ts';
import { type PolicyVersion, policyVersions } from '../schema/policies.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

export async function getPolicyVersion(db: StoreDb, versionId: string): Promise<PolicyVersion> {
  const key = parseInput(id, versionId, 'versionId');
  const [version] = await db.select().from(policyVersions).where(eq(policyVersions.id, key));
  if (!version) throw new StoreError('not-found', `policy version ${key} does not exist`);
  return version;
}
