// Reference values below were computed independently with SciPy 1.10.1 (Debian python3-scipy):
// scipy.stats.ttest_ind(b, a, equal_var=False), scipy.stats.t.ppf / t.cdf, scipy.stats.norm.sf and
// scipy.stats.binomtest(k, n).proportion_ci(0.95, 'wilson'). The arithmetic for the hand-checkable
// parts is written next to each case.
import { describe, expect, it } from 'vitest';
import { studentTCdf, studentTQuantile } from './distributions.ts';
import {
  sampleSizeForProportions,
  summarizeMean,
  summarizeProportion,
  twoProportionTest,
  welchTTest,
} from './statistics.ts';

describe('distributions', () => {
  it('matches SciPy for the t CDF and quantile at fractional degrees of freedom', () => {
    expect(studentTCdf(-3.1, 7.3)).toBeCloseTo(0.00821505906580858, 10);
    expect(studentTQuantile(0.995, 3.5)).toBeCloseTo(5.085702223526865, 8);
  });
});

describe('welchTTest', () => {
  it('binary rewards: 3/10 vs 8/10 successes', () => {
    const a = [0, 1, 1, 0, 1, 0, 0, 1, 0, 0]; // mean 0.4, s² = 0.4·0.6·10/9 = 0.2667
    const b = [1, 1, 1, 0, 1, 1, 0, 1, 1, 1]; // mean 0.8, s² = 0.8·0.2·10/9 = 0.1778
    // se = √(0.02667 + 0.01778) = 0.21082; t = 0.4 / 0.21082 = 1.89737
    const result = welchTTest(a, b);
    expect(result.difference).toBeCloseTo(0.4, 12);
    expect(result.statistic).toBeCloseTo(1.8973665961010275, 10);
    expect(result.df).toBeCloseTo(17.30769230769231, 10);
    expect(result.pValue).toBeCloseTo(0.07459169984478174, 9);
    expect(result.ci[0]).toBeCloseTo(-0.044186588288444406, 8);
    expect(result.ci[1]).toBeCloseTo(0.8441865882884445, 8);
  });

  it('continuous rewards with unequal sizes and variances', () => {
    const result = welchTTest([0.2, 0.5, 0.9, 0.4, 0.7], [0.6, 0.8, 0.75, 0.95, 0.7, 0.85]);
    expect(result.statistic).toBeCloseTo(1.799283361656781, 10);
    expect(result.df).toBeCloseTo(5.339335432432743, 9);
    expect(result.pValue).toBeCloseTo(0.12815335214264467, 9);
  });

  it('refuses arms with fewer than two values', () => {
    expect(() => welchTTest([1], [0, 1])).toThrow(/at least 2/);
  });
});

describe('summaries', () => {
  it('mean with a t interval', () => {
    const summary = summarizeMean([0.2, 0.5, 0.9, 0.4, 0.7]); // mean 2.7/5 = 0.54
    expect(summary.mean).toBeCloseTo(0.54, 12);
    expect(summary.ci[0]).toBeCloseTo(0.2045208615073339, 9);
    expect(summary.ci[1]).toBeCloseTo(0.8754791384926661, 9);
  });

  it('Wilson interval for 7 of 20', () => {
    const summary = summarizeProportion(7, 20);
    expect(summary.rate).toBe(0.35);
    expect(summary.ci[0]).toBeCloseTo(0.1811918241010821, 9);
    expect(summary.ci[1]).toBeCloseTo(0.5671457233147637, 9);
  });
});

describe('twoProportionTest', () => {
  it('40/100 vs 62/100', () => {
    // pooled p = 102/200 = 0.51; se = √(0.51·0.49·(1/100 + 1/100)) = 0.070697; z = 0.22 / 0.070697 = 3.11189
    const result = twoProportionTest(40, 100, 62, 100);
    expect(result.difference).toBeCloseTo(0.22, 12);
    expect(result.statistic).toBeCloseTo(3.11189227792669, 9);
    expect(result.pValue).toBeCloseTo(0.0018589231718414455, 10);
    expect(result.ci[0]).toBeCloseTo(0.0848335169088828, 9);
    expect(result.ci[1]).toBeCloseTo(0.35516648309111715, 9);
  });

  it('keeps a tiny p-value instead of rounding it to 0 (21/100 vs 89/100, z = 9.67)', () => {
    // Reference: Python's math.erfc(z / √2) with z = 0.68 / √(0.55·0.45·0.02).
    const result = twoProportionTest(21, 100, 89, 100);
    expect(result.statistic).toBeCloseTo(9.66509914145434, 9);
    expect(result.pValue / 4.24208977031697e-22).toBeCloseTo(1, 9);
  });

  it('identical constant arms give p = 1', () => {
    expect(twoProportionTest(0, 10, 0, 12).pValue).toBe(1);
  });
});

describe('sampleSizeForProportions', () => {
  it('0.3 → 0.5 at α 0.05 and power 0.8', () => {
    // (1.959964 + 0.841621)² · (0.21 + 0.25) / 0.2² = 7.84887 · 0.46 / 0.04 = 90.26 → 91
    expect(sampleSizeForProportions(0.3, 0.2)).toBe(91);
  });
});
