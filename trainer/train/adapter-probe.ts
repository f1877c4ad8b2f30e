// The answer a published adapter must give: the trainer's own logprobs of a fixed token sequence under
// the new weights, and under the base model alone, measured with the training engine right after the
// checkpoint is saved (checkpoint.ts writes it as probe.json; registration copies it into the
// version's metadata, so `edgerl fleet catch-up`, which has no engine, verifies from the store).
// verify-adapter.ts compares a replica's prompt_logprobs for the same sequence with it. Leaves out
// talking to replicas.
import { z } from 'zod';
import type { TrainEngine } from '../engine/train-engine.ts';

/** Tokens in the probe: 15 scored positions, enough to average out one token's rounding. */
export const probeLength = 16;

/**
 * Ids the probe uses are below this: real tokenizers' ordinary tokens (special and padding rows sit
 * at the top of the embedding, and vLLM refuses prompt ids past the tokenizer's largest).
 */
const ordinaryIds = 30_000;

export const adapterProbeSchema = z.object({
  /** The sequence, as prompt token ids. */
  tokens: z.array(z.number().int().min(0)).min(2),
  /** log p(tokens[t + 1] | tokens[≤ t]) with the adapter: tokens.length − 1 values. */
  adapter: z.array(z.number()),
  /** The same with the base model alone. */
  base: z.array(z.number()),
});
export type AdapterProbe = z.output<typeof adapterProbeSchema>;

/** The fixed sequence for a vocabulary: ids spread by a prime stride, 1 ≤ id < min(V, 30000). Pure. */
export function probeTokens(vocabSize: number): number[] {
  const range = Math.max(2, Math.min(vocabSize, ordinaryIds)) - 1;
  return Array.from({ length: probeLength }, (_, k) => 1 + ((k * 7919 + 104_729) % range));
}

/** The probe of the engine's adapter as it is now (call after the step whose weights are saved). */
export async function measureAdapterProbe(engine: TrainEngine): Promise<AdapterProbe> {
  const tokens = probeTokens(engine.model.vocabSize);
  const [adapter] = await engine.logprobs([tokens], { adapter: true });
  const [base] = await engine.logprobs([tokens], { adapter: false });
  return { tokens, adapter: adapter ?? [], base: base ?? [] };
}
