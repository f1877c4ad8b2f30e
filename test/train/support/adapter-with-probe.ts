// A trained-looking adapter (random A and B, PEFT files on disk) with the probe its weights answer, as
// the trainer records it at a checkpoint (trainer/train/adapter-probe.ts): for fleet verification tests.
import { join } from 'node:path';
import type { PolicyModel } from '../../../model/policy-model.ts';
import { type AdapterProbe, probeTokens } from '../../../trainer/train/adapter-probe.ts';

export async function adapterWithProbe(
  sampler: PolicyModel,
  root: string,
  name: string,
  seed: number,
): Promise<{ dir: string; probe: AdapterProbe }> {
  const dir = join(root, 'checkpoints', name);
  sampler.addAdapter(
    name,
    { r: 4, alpha: 8, targets: ['q_proj', 'v_proj'], initLoraWeights: false },
    { seed },
  );
  await sampler.saveAdapter(name, dir);
  const tokens = probeTokens(sampler.config.vocabSize);
  const [adapter] = await sampler.logprobs([tokens], { adapter: name });
  const [base] = await sampler.logprobs([tokens]);
  sampler.removeAdapter(name);
  return { dir, probe: { tokens, adapter: adapter ?? [], base: base ?? [] } };
}

/** The fleet settings these tests publish with. */
export const fleetOf = (replicas: string[], keepVersions = 3) => ({
  replicas,
  timeoutMs: 30_000,
  probeTolerance: 0.1,
  keepVersions,
});
