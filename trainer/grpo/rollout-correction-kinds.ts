// The rollout corrections --rollout-correction takes and the bound on the importance weight's cap: what
// the train config's schema checks. Kept apart from rollout-correction.ts, which computes the weights
// with TensorFlow.js, so that `edgerl train --help` does not load it. The formula and its sources are there.

/** The behaviour correction applied to every trained token; `none` leaves the loss as it was. */
export type RolloutCorrection = { readonly kind: 'tis'; readonly cap: number };

export const rolloutCorrectionKinds = ['none', 'tis'] as const;
export type RolloutCorrectionKind = (typeof rolloutCorrectionKinds)[number];

/** |log π_prox − log π_sampler| is clamped to this before exp (verl rollout correction's bound). */
export const logRatioBound = 20;
