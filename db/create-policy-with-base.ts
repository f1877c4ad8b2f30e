// A new policy as training and routing need it: the policy row and its base weights as version 0
// (`<name>@0`, published and the default), in one transaction, so no reader ever sees a policy without
// a default. `edgerl policy create` calls it, and the trainer when its policy does not exist yet.
import type { Policy } from './schema/policies.ts';
import type { Store } from './store.ts';

export interface PolicyWithBaseInput {
  readonly name: string;
  /** The base model's name on the inference endpoint (what vLLM or serve-model serves it as). */
  readonly baseModel: string;
}

export async function createPolicyWithBase(store: Store, input: PolicyWithBaseInput): Promise<Policy> {
  return store.transaction(async (tx) => {
    const policy = await tx.createPolicy({ name: input.name, baseModel: input.baseModel });
    const base = await tx.registerPolicyVersion({
      policyId: policy.id,
      adapterName: `${input.name}@0`,
      metadata: { base: true },
    });
    await tx.publishPolicyVersion({ versionId: base.id, makeDefault: true });
    return tx.getPolicy({ policyId: policy.id });
  });
}
