// Whether a replica's answer comes from the published adapter: its prompt_logprobs for the probe
// sequence (adapter-probe.ts) under the adapter's name, and under the base model's name, judged
// against the trainer's own. Two checks, because either alone can be fooled:
//   close:   mean |replica − trainer| over the probe tokens ≤ tolerance (engines differ: fp32 tfjs
//            vs tfjs is ~1e-5, a bf16 vLLM vs an fp32 trainer a few hundredths; the setting's doc);
//   adapted: the replica's adapter answer moves away from its own base answer by at least half as
//            much as the trainer's adapter moves from the base, so a replica serving the base model
//            under the adapter's name fails even with a loose tolerance. An adapter the trainer
//            cannot tell from the base (shift below `indistinguishable`) skips it.
// Without a recorded probe (a version published before probes, or by hand) only `adapted` runs, with
// a zero bar: the answers must differ at all. Pure.
import type { AdapterProbe } from './adapter-probe.ts';

/** Below this mean shift (nats) the trainer's adapter answers as the base does: `adapted` cannot tell. */
export const indistinguishable = 1e-4;

export type ProbeVerdict =
  | { readonly ok: true; readonly note: string }
  | { readonly ok: false; readonly reason: string };

export function meanAbsDifference(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length || a.length === 0) return Number.POSITIVE_INFINITY;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs((a[i] as number) - (b[i] as number));
  return sum / a.length;
}

const nats = (value: number) => value.toPrecision(3);

export function judgeProbe(input: {
  /** The replica's logprobs of the probe tokens (positions 1…T − 1) under the adapter's name. */
  readonly adapterAnswer: readonly number[];
  /** The same under the base model's name. */
  readonly baseAnswer: readonly number[];
  readonly probe: AdapterProbe | undefined;
  /** Largest mean |replica − trainer| accepted, nats. */
  readonly tolerance: number;
}): ProbeVerdict {
  const { adapterAnswer, baseAnswer, probe, tolerance } = input;
  const moved = meanAbsDifference(adapterAnswer, baseAnswer);
  if (!probe) {
    return moved > 0
      ? { ok: true, note: `no recorded probe; adapter answer differs from base by ${nats(moved)}` }
      : {
          ok: false,
          reason: 'the adapter answers exactly as the base model does (serving the base under its name?)',
        };
  }
  const gap = meanAbsDifference(adapterAnswer, probe.adapter);
  if (!(gap <= tolerance)) {
    return {
      ok: false,
      reason: `its probe logprobs are ${nats(gap)} nats (mean |Δ|) from the trainer's, over the tolerance ${tolerance}: not this adapter`,
    };
  }
  const shift = meanAbsDifference(probe.adapter, probe.base);
  if (shift < indistinguishable)
    return { ok: true, note: `within ${nats(gap)}; adapter ≈ base, base check skipped` };
  if (!(moved >= shift / 2)) {
    return {
      ok: false,
      reason: `its answer under the adapter's name moves ${nats(moved)} nats from its base model's, the trainer's adapter moves ${nats(shift)}: it serves the base model (or another adapter) under this name`,
    };
  }
  return { ok: true, note: `within ${nats(gap)} of the trainer; ${nats(moved)} from base` };
}
