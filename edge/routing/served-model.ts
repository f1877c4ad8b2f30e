// The model name the inference endpoint serves a policy version under. A trained version is a LoRA
// adapter served by its adapter name (`agent@7`, vLLM's `--lora-modules` name); the base version
// (version 0, no adapter files, no training run) is the base weights themselves, which the endpoint
// serves under the base model's name, so it routes to the policy's `baseModel` (its name as the
// inference server knows it, set when the policy is created: the trainer's `--base-model-name`).
import type { Policy, PolicyVersion } from '../../db/schema/policies.ts';
import type { Store } from '../../db/store.ts';
import { isBaseVersion, type VersionShape } from '../../protocol/base-version.ts';

export { isBaseVersion };

/** Pure: the served name, given the version's policy. */
function servedModelName(
  version: VersionShape & Pick<PolicyVersion, 'adapterName'>,
  policy: Pick<Policy, 'baseModel'>,
): string {
  return isBaseVersion(version) ? policy.baseModel : version.adapterName;
}

/** The served name, reading the policy only for a base version. */
export async function servedModel(store: Store, version: PolicyVersion): Promise<string> {
  if (!isBaseVersion(version)) return version.adapterName;
  return servedModelName(version, await store.getPolicy({ policyId: version.policyId }));
}
