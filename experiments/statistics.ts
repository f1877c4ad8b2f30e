// The statistics of an A/B report: per-arm means with confidence intervals, Welch's t-test for
// mean rewards, a two-proportion z-test for success rates, and the sample size each needs.
// Pure functions over numbers; the report command gathers the numbers from the store.
import { normalCdf, normalQuantile, studentTCdf, studentTQuantile } from './distributions.ts';

export interface MeanSummary {
  n: number;
  mean: number;
  /** Sample standard deviation (n − 1 in the denominator); 0 when n < 2. */
  sd: number;
  /** Confidence interval of the mean from the t distribution; NaN bounds when n < 2. */
  ci: [number, number];
}

export function summarizeMean(values: readonly number[], confidence = 0.95): MeanSummary {
  const n = values.length;
  if (n === 0) return { n, mean: Number.NaN, sd: Number.NaN, ci: [Number.NaN, Number.NaN] };
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1)) : 0;
  if (n < 2) return { n, mean, sd, ci: [Number.NaN, Number.NaN] };
  const half = studentTQuantile(1 - (1 - confidence) / 2, n - 1) * (sd / Math.sqrt(n));
  return { n, mean, sd, ci: [mean - half, mean + half] };
}

export interface ProportionSummary {
  n: number;
  successes: number;
  rate: number;
  /** Wilson score interval (Wilson 1927): stays inside [0, 1] and behaves at rates near 0 or 1. */
  ci: [number, number];
}

export function summarizeProportion(successes: number, n: number, confidence = 0.95): ProportionSummary {
  if (n === 0) return { n, successes, rate: Number.NaN, ci: [Number.NaN, Number.NaN] };
  const p = successes / n;
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return { n, successes, rate: p, ci: [Math.max(0, centre - half), Math.min(1, centre + half)] };
}

export interface DifferenceTest {
  /** Treatment minus control. */
  difference: number;
  ci: [number, number];
  pValue: number;
  statistic: number;
  /** Degrees of freedom (Welch–Satterthwaite) for the t-test; Infinity for the z-test. */
  df: number;
  test: 'welch-t' | 'two-proportion-z';
}

/**
 * Welch's unequal-variance t-test of mean(b) − mean(a) (Welch 1947), two-sided, with the
 * Welch–Satterthwaite degrees of freedom. Needs at least two values per arm.
 */
export function welchTTest(a: readonly number[], b: readonly number[], confidence = 0.95): DifferenceTest {
  const sa = summarizeMean(a);
  const sb = summarizeMean(b);
  if (sa.n < 2 || sb.n < 2) throw new RangeError('Welch t-test needs at least 2 values in each arm');
  const va = (sa.sd * sa.sd) / sa.n;
  const vb = (sb.sd * sb.sd) / sb.n;
  const difference = sb.mean - sa.mean;
  const se = Math.sqrt(va + vb);
  if (se === 0) {
    // Both arms constant: the difference is exact.
    const p = difference === 0 ? 1 : 0;
    return {
      difference,
      ci: [difference, difference],
      pValue: p,
      statistic: Number.NaN,
      df: sa.n + sb.n - 2,
      test: 'welch-t',
    };
  }
  const df = (va + vb) ** 2 / (va ** 2 / (sa.n - 1) + vb ** 2 / (sb.n - 1));
  const t = difference / se;
  const pValue = 2 * (1 - studentTCdf(Math.abs(t), df));
  const half = studentTQuantile(1 - (1 - confidence) / 2, df) * se;
  return {
    difference,
    ci: [difference - half, difference + half],
    pValue,
    statistic: t,
    df,
    test: 'welch-t',
  };
}

/**
 * Two-sided two-proportion z-test of rate(b) − rate(a): the p-value uses the pooled standard error
 * (the usual test of H0: pa = pb), the interval the unpooled (Wald) standard error.
 */
export function twoProportionTest(
  successesA: number,
  nA: number,
  successesB: number,
  nB: number,
  confidence = 0.95,
): DifferenceTest {
  if (nA === 0 || nB === 0) throw new RangeError('two-proportion test needs at least 1 trial in each arm');
  const pa = successesA / nA;
  const pb = successesB / nB;
  const difference = pb - pa;
  const pooled = (successesA + successesB) / (nA + nB);
  const pooledSe = Math.sqrt(pooled * (1 - pooled) * (1 / nA + 1 / nB));
  const z = pooledSe === 0 ? (difference === 0 ? 0 : Number.POSITIVE_INFINITY) : difference / pooledSe;
  // 2·Φ(−|z|), not 2·(1 − Φ(|z|)): the subtraction rounds to 0 once p < ~1e-16 (z > 8.3, e.g. 21% → 89%
  // on 100 per arm), where the lower tail keeps its precision (erfc's continued fraction).
  const pValue = pooledSe === 0 ? (difference === 0 ? 1 : 0) : 2 * normalCdf(-Math.abs(z));
  const waldSe = Math.sqrt((pa * (1 - pa)) / nA + (pb * (1 - pb)) / nB);
  const half = normalQuantile(1 - (1 - confidence) / 2) * waldSe;
  return {
    difference,
    ci: [difference - half, difference + half],
    pValue,
    statistic: z,
    df: Number.POSITIVE_INFINITY,
    test: 'two-proportion-z',
  };
}

/**
 * Trials per arm to detect a change of success rate from `baseline` to `baseline + minEffect` with a
 * two-sided test at `alpha` and the given power (normal approximation, e.g. Chow, Shao & Wang,
 * "Sample Size Calculations in Clinical Research", §4.2).
 */
export function sampleSizeForProportions(
  baseline: number,
  minEffect: number,
  alpha = 0.05,
  power = 0.8,
): number {
  const p1 = baseline;
  const p2 = Math.min(1, Math.max(0, baseline + minEffect));
  const zAlpha = normalQuantile(1 - alpha / 2);
  const zBeta = normalQuantile(power);
  const variance = p1 * (1 - p1) + p2 * (1 - p2);
  if (p1 === p2) throw new RangeError('minimum effect must be non-zero');
  return Math.ceil(((zAlpha + zBeta) ** 2 * variance) / (p2 - p1) ** 2);
}
