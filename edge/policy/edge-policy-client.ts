// The episode loop's policy client as the edge's config asks for it, one rule for the Node and the
// Worker entries: the one OpenAI-compatible endpoint, or, with a fleet (INFERENCE_REPLICAS), a client
// that sends each request to a replica holding its model, read through `store`.
import type { Store } from '../../db/store.ts';
import type { EdgeConfig } from '../edge-config.ts';
import { episodeBoundDefaults } from '../episode/episode-defaults.ts';
import type { ReplicaRouter } from '../routing/replica-router.ts';
import { FleetPolicyClient } from './fleet-policy-client.ts';
import { OpenAIPolicyClient, responseBytesPerReplyByte } from './openai-policy-client.ts';
import type { PolicyClient } from './policy-client.ts';

export function edgePolicyClient(
  config: EdgeConfig,
  fleet: { readonly router: ReplicaRouter; readonly store: Store } | undefined,
): PolicyClient {
  const options = {
    ...(config.upstream.apiKey ? { apiKey: config.upstream.apiKey } : {}),
    requestTokenIds: config.upstream.requestTokenIds,
    maxResponseBytes: (config.bounds ?? episodeBoundDefaults).maxReplyBytes * responseBytesPerReplyByte,
  };
  return fleet
    ? new FleetPolicyClient({ ...options, picker: fleet.router.forStore(fleet.store) })
    : new OpenAIPolicyClient({ ...options, baseUrl: config.upstream.baseUrl });
}
