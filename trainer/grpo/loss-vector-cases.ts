// The cases of the loss test vectors (loss-vectors.ts computes them): fixed micro-batches chosen to reach
// every branch of objective-loss.ts (both losses and aggregations, KL, truncated importance sampling,
// on-policy tokens, ragged masks, ratios far outside the clip band, micro-batches of a bigger step, SFT
// weights), their inputs drawn from a seed and rounded to 4 decimals. Pure.
//
// Legend: B = sequences in the micro-batch, T = predicted positions per sequence. In the file, null is NaN.
import { createRng } from '../../model/rng.ts';
import type { Aggregation, StepNormaliser } from './aggregate.ts';
import type { GrpoLossOptions } from './grpo-loss.ts';
import type { ClipBounds, LossKind } from './losses.ts';
import type { Objective } from './objective-loss.ts';

export type Grid = number[][]; // [B, T]
/** [B, T] with NaN written as null (JSON has no NaN). */
export type NullableGrid = (number | null)[][];

export interface LossVectorInputs {
  readonly logprobs: NullableGrid;
  readonly mask: Grid;
  readonly weighted_mask: Grid;
  readonly old_logprobs: NullableGrid;
  readonly on_policy: Grid; // 0/1
  readonly advantages: number[]; // [B]
  readonly ref_logprobs: NullableGrid | null;
}

/** Inputs are rounded to 4 decimals before use, so the file holds exactly what was computed on. */
const round4 = (value: number) => Math.round(value * 1e4) / 1e4;
/** 9 significant digits hold a float32 exactly. */
const nullable = (grid: Grid): NullableGrid =>
  grid.map((row) => row.map((value) => (Number.isNaN(value) ? null : value)));
export const grid = (rows: number, cols: number, at: (b: number, t: number) => number): Grid =>
  Array.from({ length: rows }, (_, b) => Array.from({ length: cols }, (_, t) => at(b, t)));

/** How a GRPO micro-batch is laid out; the numbers come from the seed. */
interface GrpoLayout {
  readonly seed: number;
  readonly mask: Grid;
  readonly advantages: number[];
  /** Trained tokens without a sampling log-prob ([b, t]). */
  readonly onPolicy?: readonly (readonly [number, number])[];
  /** Sampling log-ratios ℓ − o forced at [b, t] (far outside a clip band, or past the ±20 clamp). */
  readonly logRatios?: readonly (readonly [number, number, number])[];
  readonly ref?: boolean;
  /** NaN off the mask in old_logprobs (and logprobs and ref_logprobs with 'all'), 0 otherwise. */
  readonly nanOffMask?: 'old' | 'all';
}

function grpoInputs(layout: GrpoLayout): LossVectorInputs {
  const rng = createRng(layout.seed);
  const { mask } = layout;
  const [rows, cols] = [mask.length, mask[0]?.length ?? 0];
  const trained = (b: number, t: number) => mask[b]?.[t] === 1;
  // Every draw is taken whatever the options, so a layout's numbers do not shift when one is toggled.
  const logprobs = grid(rows, cols, () => round4(-(0.02 + 2.5 * rng.next()))); // [B, T]
  const logRatio = grid(rows, cols, () => 0.4 * rng.normal()); // [B, T] ratios around 1
  const refShift = grid(rows, cols, () => 0.3 * rng.normal()); // [B, T]
  for (const [b, t, value] of layout.logRatios ?? []) (logRatio[b] as number[])[t] = value;
  const onPolicy = grid(rows, cols, (b, t) =>
    trained(b, t) && (layout.onPolicy ?? []).some(([ob, ot]) => ob === b && ot === t) ? 1 : 0,
  );
  const offMask = (b: number, t: number, value: number) => (trained(b, t) ? value : Number.NaN);
  const old = grid(rows, cols, (b, t) => {
    if (!trained(b, t)) return layout.nanOffMask ? Number.NaN : 0;
    return onPolicy[b]?.[t] === 1 ? 0 : round4((logprobs[b]?.[t] as number) - (logRatio[b]?.[t] as number));
  });
  const ref = grid(rows, cols, (b, t) => round4((logprobs[b]?.[t] as number) + (refShift[b]?.[t] as number)));
  const all = layout.nanOffMask === 'all';
  return {
    logprobs: nullable(
      all ? grid(rows, cols, (b, t) => offMask(b, t, logprobs[b]?.[t] as number)) : logprobs,
    ),
    mask,
    weighted_mask: mask,
    old_logprobs: nullable(old),
    on_policy: onPolicy,
    advantages: layout.advantages,
    ref_logprobs: layout.ref
      ? nullable(all ? grid(rows, cols, (b, t) => offMask(b, t, ref[b]?.[t] as number)) : ref)
      : null,
  };
}

const noRef = (inputs: LossVectorInputs): LossVectorInputs => ({ ...inputs, ref_logprobs: null });

function sftInputs(seed: number, mask: Grid, weights?: Grid): LossVectorInputs {
  const rng = createRng(seed);
  const [rows, cols] = [mask.length, mask[0]?.length ?? 0];
  const logprobs = grid(rows, cols, () => round4(-(0.01 + 4 * rng.next()))); // [B, T]
  return {
    logprobs,
    mask,
    weighted_mask: weights ? grid(rows, cols, (b, t) => (mask[b]?.[t] ?? 0) * (weights[b]?.[t] ?? 0)) : mask,
    old_logprobs: grid(rows, cols, () => 0),
    on_policy: grid(rows, cols, () => 0),
    advantages: Array.from({ length: rows }, () => 0),
    ref_logprobs: null,
  };
}

/** The micro-batch's own totals; `extra` adds tokens and sequences of the step's other micro-batches. */
function normaliserOf(mask: Grid, extra = { tokens: 0, sequences: 0 }): StepNormaliser {
  const lengths = mask.map((row) => row.reduce((sum, bit) => sum + bit, 0));
  return {
    tokens: lengths.reduce((sum, n) => sum + n, 0) + extra.tokens,
    sequences: lengths.filter((n) => n > 0).length + extra.sequences,
  };
}

// Ragged, not prefix-shaped (prompt, tool output and assistant turns interleave); row 2 trains nothing.
const ragged: Grid = [
  [0, 1, 1, 1, 0, 1],
  [1, 1, 1, 1, 0, 0],
  [0, 0, 0, 0, 0, 0],
  [0, 0, 1, 1, 1, 0],
  [1, 0, 1, 1, 1, 1],
];
// Negative, zero and positive advantages; row 2's is never used (no trained token).
const mixedAdvantages = [1.25, -0.8, 0.6, 0, -1.5];
// ρ = e^±2.5 (12.2 and 0.082) and e^±0.9: far outside [0.8, 1.28] on both sides, with either sign of A.
const farRatios = [
  [0, 1, 2.5],
  [0, 3, -2.5],
  [1, 0, 2.5],
  [1, 2, -0.9],
  [4, 2, 0.9],
  [4, 5, -2.5],
] as const;
// Sampler log-ratios past the ±20 clamp both ways, and around a cap of 2 (e^0.9 = 2.46, e^0.5 = 1.65).
const staleSampler = [
  [0, 1, 30],
  [0, 3, -25],
  [1, 0, 0.9],
  [1, 2, 0.5],
  [4, 2, -0.9],
  [4, 5, 1.8],
] as const;
const someOnPolicy = [
  [0, 2],
  [3, 3],
  [4, 0],
] as const;
const everyTrainedToken = ragged.flatMap((row, b) => row.flatMap((bit, t) => (bit ? [[b, t] as const] : [])));
const dapo: ClipBounds = { low: 0.2, high: 0.28 };
const art: ClipBounds = { low: 1, high: 4 };
/** Another 17 tokens and 3 sequences in the step's other micro-batches. */
const partOfStep = { tokens: 17, sequences: 3 };

/** A GRPO objective; `cap` adds the TIS correction. */
function grpo(
  lossKind: LossKind,
  aggregation: Aggregation,
  clip: ClipBounds,
  { beta = 0, cap }: { beta?: number; cap?: number } = {},
): Objective {
  const loss: GrpoLossOptions = { lossKind, aggregation, clip, beta };
  return { kind: 'grpo', loss: cap === undefined ? loss : { ...loss, correction: { kind: 'tis', cap } } };
}

export interface CaseSpec {
  readonly name: string;
  readonly objective: Objective;
  readonly inputs: LossVectorInputs;
  readonly normaliser: StepNormaliser;
}

export function caseSpecs(): CaseSpec[] {
  const plain = grpoInputs({
    seed: 1,
    mask: ragged,
    advantages: mixedAdvantages,
    onPolicy: someOnPolicy,
    logRatios: farRatios,
    nanOffMask: 'old',
  });
  const withRef = grpoInputs({
    seed: 2,
    mask: ragged,
    advantages: mixedAdvantages,
    onPolicy: someOnPolicy,
    logRatios: farRatios,
    ref: true,
  });
  const stale = grpoInputs({
    seed: 3,
    mask: ragged,
    advantages: mixedAdvantages,
    onPolicy: someOnPolicy,
    logRatios: staleSampler,
    ref: true,
    nanOffMask: 'old',
  });
  const garbage = grpoInputs({
    seed: 4,
    mask: ragged,
    advantages: mixedAdvantages,
    onPolicy: someOnPolicy,
    logRatios: staleSampler,
    ref: true,
    nanOffMask: 'all',
  });
  const allOnPolicy = grpoInputs({
    seed: 5,
    mask: ragged,
    advantages: mixedAdvantages,
    onPolicy: everyTrainedToken,
  });
  const empty = grpoInputs({ seed: 6, mask: grid(2, 4, () => 0), advantages: [0.5, -0.5], ref: true });
  const own = normaliserOf(ragged);
  const step = normaliserOf(ragged, partOfStep);
  const sftMask: Grid = [
    [0, 0, 1, 1, 1, 0, 1],
    [0, 1, 1, 1, 1, 1, 1],
    [0, 0, 0, 0, 0, 0, 0],
  ];
  const lossWeights: Grid = [
    [1, 1, 0.25, 2, 0, 1, 1.5],
    [1, 0.5, 0.5, 1, 1, 0, 3],
    [1, 1, 1, 1, 1, 1, 1],
  ];
  const spec = (
    name: string,
    objective: Objective,
    inputs: LossVectorInputs,
    normaliser: StepNormaliser,
  ) => ({
    name,
    objective,
    inputs,
    normaliser,
  });
  return [
    // Both token losses × both aggregations, no KL, no correction.
    spec('ppo-clip/token-mean', grpo('ppo-clip', 'token-mean', dapo), plain, own),
    spec('ppo-clip/sequence-mean/part-of-step', grpo('ppo-clip', 'sequence-mean', dapo), plain, step),
    spec('cispo/token-mean/part-of-step', grpo('cispo', 'token-mean', art), plain, step),
    spec('cispo/sequence-mean', grpo('cispo', 'sequence-mean', dapo), plain, own),
    // k3 KL against a reference: added with beta, or only measured with beta 0.
    spec('ppo-clip/token-mean/kl', grpo('ppo-clip', 'token-mean', dapo, { beta: 0.1 }), withRef, own),
    spec(
      'cispo/sequence-mean/kl/part-of-step',
      grpo('cispo', 'sequence-mean', art, { beta: 0.04 }),
      withRef,
      step,
    ),
    spec('ppo-clip/sequence-mean/kl-measured-only', grpo('ppo-clip', 'sequence-mean', dapo), withRef, own),
    // Truncated importance sampling against a stale sampler (log-ratios past ±20 included).
    spec('ppo-clip/token-mean/tis', grpo('ppo-clip', 'token-mean', dapo, { cap: 2 }), noRef(stale), own),
    spec(
      'cispo/sequence-mean/tis/kl/part-of-step',
      grpo('cispo', 'sequence-mean', art, { beta: 0.1, cap: 5 }),
      stale,
      step,
    ),
    spec(
      'ppo-clip/sequence-mean/tis-cap-1/kl',
      grpo('ppo-clip', 'sequence-mean', dapo, { beta: 0.2, cap: 1 }),
      stale,
      own,
    ),
    // NaN off the mask in logprobs, old and reference log-probs: none of it may reach a value or a gradient.
    spec(
      'ppo-clip/token-mean/tis/kl/nan-off-mask',
      grpo('ppo-clip', 'token-mean', dapo, { beta: 0.1, cap: 2 }),
      garbage,
      step,
    ),
    spec(
      'cispo/sequence-mean/kl/nan-off-mask',
      grpo('cispo', 'sequence-mean', dapo, { beta: 0.05 }),
      garbage,
      own,
    ),
    // Every trained token on-policy: ratio ≡ 1, so nothing clips and every weight is 1.
    spec('ppo-clip/token-mean/all-on-policy', grpo('ppo-clip', 'token-mean', dapo), allOnPolicy, own),
    spec(
      'cispo/token-mean/tis/all-on-policy',
      grpo('cispo', 'token-mean', art, { cap: 2 }),
      allOnPolicy,
      step,
    ),
    // A micro-batch with no trained token inside a step that has some: every sum 0.
    spec(
      'cispo/sequence-mean/tis/kl/empty-micro-batch',
      grpo('cispo', 'sequence-mean', art, { beta: 0.1, cap: 2 }),
      empty,
      { tokens: 10, sequences: 3 },
    ),
    // SFT: token-mean of −ℓ, with and without per-token loss weights.
    spec('sft', { kind: 'sft' }, sftInputs(7, sftMask), normaliserOf(sftMask)),
    spec(
      'sft/loss-weights/part-of-step',
      { kind: 'sft' },
      sftInputs(8, sftMask, lossWeights),
      normaliserOf(sftMask, partOfStep),
    ),
  ];
}
