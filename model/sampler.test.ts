import { describe, expect, it } from 'vitest';
import { createRng } from './rng.ts';
import { checkSampling, logSumExp, sampleToken, samplingDistribution, tokenLogprob } from './sampler.ts';

// softmax([2, 1, 0, −1]): e² = 7.389056, e¹ = 2.718282, e⁰ = 1, e⁻¹ = 0.367879, sum 11.475217
// → 0.643914, 0.236883, 0.087144, 0.032059.
const logits = new Float32Array([2, 1, 0, -1]);

describe('sampling', () => {
  it('computes log Σ exp stably', () => {
    // exp(0) + exp(ln 2) + exp(ln 3) = 6
    expect(logSumExp([0, Math.log(2), Math.log(3)])).toBeCloseTo(Math.log(6), 12);
    // Shifting every logit by 1000 shifts the result by 1000 (no overflow).
    expect(logSumExp([1000, 1000 + Math.log(2), 1000 + Math.log(3)])).toBeCloseTo(1000 + Math.log(6), 9);
  });

  it('computes the raw log-probability of a token', () => {
    expect(tokenLogprob(logits, 1)).toBeCloseTo(1 - Math.log(11.475217), 6); // −1.440189
  });

  it('truncates to the nucleus and renormalises', () => {
    // p = 0.7: 0.6439 < 0.7, 0.6439 + 0.2369 = 0.8808 ≥ 0.7 → keep tokens 0, 1: 7.389/10.107, 2.718/10.107.
    const nucleus = samplingDistribution(logits, { temperature: 1, topP: 0.7, topK: 0 });
    expect(nucleus.tokens).toEqual([0, 1]);
    expect(nucleus.probs[0]).toBeCloseTo(0.731059, 5);
    expect(nucleus.probs[1]).toBeCloseTo(0.268941, 5);
    // p = 0.6: the first token alone already has 0.6439.
    expect(samplingDistribution(logits, { temperature: 1, topP: 0.6, topK: 0 }).tokens).toEqual([0]);
    // top-k 3: 7.389 / 11.107 = 0.665241.
    const topK = samplingDistribution(logits, { temperature: 1, topP: 1, topK: 3 });
    expect(topK.tokens).toEqual([0, 1, 2]);
    expect(topK.probs[0]).toBeCloseTo(0.665241, 5);
  });

  it('applies the temperature before normalising', () => {
    // T = 2: e^1, e^0.5, e^0, e^−0.5 = 2.718282, 1.648721, 1, 0.606531, sum 5.973534; each / 5.973534.
    const { probs } = samplingDistribution(logits, { temperature: 2, topP: 1, topK: 0 });
    expect(probs.map((p) => Number(p.toFixed(6)))).toEqual([0.455054, 0.276004, 0.167405, 0.101536]);
  });

  it('is greedy at temperature 0 (lowest id on ties) and reports the raw logprob', () => {
    const rng = createRng(1);
    expect(sampleToken(new Float32Array([0, 3, 3, 1]), { temperature: 0, topP: 1, topK: 0 }, rng).token).toBe(
      1,
    );
    const { token, logprob } = sampleToken(logits, { temperature: 0, topP: 0.1, topK: 0 }, rng);
    expect(token).toBe(0);
    expect(logprob).toBeCloseTo(2 - Math.log(11.475217), 6);
  });

  it('draws with the right frequencies, reproducibly for a seed', () => {
    const params = { temperature: 1, topP: 1, topK: 0 };
    const draw = (seed: number) => {
      const rng = createRng(seed);
      const counts = [0, 0, 0, 0];
      for (let i = 0; i < 20000; i++) {
        const { token } = sampleToken(logits, params, rng);
        counts[token] = (counts[token] as number) + 1;
      }
      return counts;
    };
    const counts = draw(42);
    expect(draw(42)).toEqual(counts);
    expect(draw(43)).not.toEqual(counts);
    // Binomial standard error at n = 20000 is ≤ 0.0036; allow about three of them.
    for (const [i, p] of [0.643914, 0.236883, 0.087144, 0.032059].entries()) {
      expect(Math.abs((counts[i] as number) / 20000 - p)).toBeLessThan(0.011);
    }
  });

  it('rejects bad parameters', () => {
    expect(() => checkSampling({ temperature: -1, topP: 1, topK: 0 })).toThrow(/temperature/);
    expect(() => checkSampling({ temperature: 1, topP: 0, topK: 0 })).toThrow(/topP must be in \(0, 1\]/);
    expect(() => checkSampling({ temperature: 1, topP: 1, topK: 1.5 })).toThrow(/topK/);
  });
});
