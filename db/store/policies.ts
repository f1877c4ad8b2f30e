// Policies: create one, and find one by name or id.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type Policy, policies } from '../schema/policies.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

/** Policy names become adapter names (`agent@7`) and model names in requests: no `@`, no spaces. */
export const policyName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
    'letters, digits, ".", "_" or "-", starting with a letter or digit',
  );

const createPolicySchema = z.object({
  name: policyName,
  /** The base model's name as the inference server knows it (`Qwen/Qwen2.5-0.5B-Instruct`). */
  baseModel: z.string().min(1).max(500),
  description: z.string().max(2000).optional(),
});
export type CreatePolicyInput = z.input<typeof createPolicySchema>;

export async function createPolicy(db: StoreDb, input: CreatePolicyInput): Promise<Policy> {
  const policy = parseInput(createPolicySchema, input, 'createPolicy');
  const [row] = await db
    .insert(policies)
    .values({ ...policy, description: policy.description ?? null })
    .onConflictDoNothing({ target: policies.name })
    .returning();
  if (!row) throw new StoreError('conflict', `policy "${policy.name}" already exists`);
  return row;
}

const policyRefSchema = z.union([z.object({ policyId: id }), z.object({ policyName })]);
export type PolicyRef = z.input<typeof policyRefSchema>;

export async function getPolicy(db: StoreDb, input: PolicyRef): Promise<Policy> {
  const ref = parseInput(policyRefSchema, input, 'policy');
  const [row] = await db
    .select()
    .from(policies)
    .where('policyId' in ref ? eq(policies.id, ref.policyId) : eq(policies.name, ref.policyName));
  if (!row) {
    const label = 'policyId' in ref ? ref.policyId : `"${ref.policyName}"`;
    throw new StoreError('not-found', `policy ${label} does not exist`);
  }
  return row;
}
