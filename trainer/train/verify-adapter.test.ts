// judgeProbe on hand-made answers: the tolerance bounds the gap to the trainer's logprobs, and an
// answer that does not move from the base model fails however loose the tolerance.
import { describe, expect, it } from 'vitest';
import { judgeProbe, meanAbsDifference } from './verify-adapter.ts';

// The trainer's adapter moves each of 3 tokens by 0.4 from the base: mean shift 0.4.
const probe = { tokens: [1, 2, 3, 4], adapter: [-1.4, -2.4, -3.4], base: [-1, -2, -3] };

describe('judgeProbe', () => {
  it('accepts an answer within the tolerance that moves from the base', () => {
    // |Δ| = 0.01, 0.02, 0.03 → mean 0.02 ≤ 0.1; moved from base by 0.39..0.43 ≥ 0.2.
    const verdict = judgeProbe({
      adapterAnswer: [-1.39, -2.42, -3.43],
      baseAnswer: [-1, -2, -3],
      probe,
      tolerance: 0.1,
    });
    expect(verdict.ok).toBe(true);
    expect(meanAbsDifference([-1.39, -2.42, -3.43], probe.adapter)).toBeCloseTo(0.02, 10);
  });

  it('rejects an answer beyond the tolerance', () => {
    const verdict = judgeProbe({
      adapterAnswer: [-2, -3, -4],
      baseAnswer: [-1, -2, -3],
      probe,
      tolerance: 0.1,
    });
    expect(verdict.ok || verdict.reason).toMatch(/over the tolerance 0.1/);
  });

  it('rejects the base model under the adapter name even with a loose tolerance', () => {
    const verdict = judgeProbe({
      adapterAnswer: [-1, -2, -3],
      baseAnswer: [-1, -2, -3],
      probe,
      tolerance: 10,
    });
    expect(verdict.ok || verdict.reason).toMatch(/serves the base model/);
  });

  it('skips the base check for an adapter the trainer cannot tell from the base, and needs a difference without a probe', () => {
    const untrained = { tokens: [1, 2], adapter: [-1], base: [-1] };
    expect(judgeProbe({ adapterAnswer: [-1], baseAnswer: [-1], probe: untrained, tolerance: 0.1 }).ok).toBe(
      true,
    );
    expect(judgeProbe({ adapterAnswer: [-1], baseAnswer: [-1], probe: undefined, tolerance: 0.1 }).ok).toBe(
      false,
    );
    expect(judgeProbe({ adapterAnswer: [-1.2], baseAnswer: [-1], probe: undefined, tolerance: 0.1 }).ok).toBe(
      true,
    );
  });
});
