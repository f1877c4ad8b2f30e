// The store's defaults, limits and choices that callers name in usage text and flag checks, in a module
// that imports nothing: `edgerl train --help`, `edgerl ab create --help` and `edgerl import --help` read
// them without loading drizzle or the query functions. The query functions and the schema import them
// from here; db/store.ts re-exports them with the rest of what callers outside db/ may name.

/** The lease a claim or renewal takes when the caller names none, seconds: ten minutes, long enough
 *  for a scoring call and a training step on CPU (an edgerl choice); the trainer's default reads it. */
export const defaultLeaseSeconds = 600;

/** Episodes in one ingest call; the edge's body limit and the CLI's batches keep requests far below it. */
export const maxIngestEpisodes = 1_000;
/** Turns in one ingested episode (an agent run of a few hundred steps is long). */
export const maxIngestTurns = 10_000;

/** `reward`: mean reward, Welch's t-test; `success`: share of rewards equal to 1, two-proportion z-test. */
export const experimentMetrics = ['reward', 'success'] as const;
export type ExperimentMetric = (typeof experimentMetrics)[number];

/**
 * Rewarded trajectories per arm when nothing sizes the test. A floor against verdicts on noise, not a
 * power calculation: with rewards in [0, 1] (sd ≤ 0.5) and 100 per arm, the 95% interval of a
 * difference of means is at most ±1.97·0.5·√(2/100) ≈ ±0.14 wide, and t(99) is within 1.2% of the
 * normal quantile (1.984 vs 1.960), so the interval is close to its large-sample value.
 */
export const defaultMinSamples = 100;

/**
 * Which reward the A/B report compares. `auto`: final_reward (what the trainer used) where set, else
 * verifier_reward (live traffic the trainer never scored); the others read one column.
 */
export const abRewardSources = ['auto', 'final', 'verifier', 'judge'] as const;
export type AbRewardSource = (typeof abRewardSources)[number];
