// The edge configuration bench:edge runs with: the inference double upstream (token ids requested,
// so turns are recorded token-exact as against vLLM), one bearer key, long timeouts so a loaded
// machine slows calls down rather than failing them.
import type { EdgeConfig } from '../edge/edge-config.ts';

export const benchApiKey = 'bench-key';

export function benchEdgeConfig(inferenceUrl: string, episodeConcurrency: number): EdgeConfig {
  return {
    upstream: { baseUrl: inferenceUrl, requestTokenIds: true, timeoutMs: 120_000 },
    apiKeys: [benchApiKey],
    defaultModel: 'bench',
    episodeConcurrency,
    policyTimeoutMs: 120_000,
  };
}
