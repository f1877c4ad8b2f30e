// Host-side sampling of one row: raw logprobs (before bias and masks), top-k ordering, logit bias
// and allowed-token masks, on logits small enough to compute by hand.
import { describe, expect, it } from 'vitest';
import { createRng } from '../model/rng.ts';
import { sampleRow, topLogprobs } from './row-sampler.ts';

const greedy = { temperature: 0, topP: 1, topK: 0 };

describe('row sampler', () => {
  it('orders the top k by value, then by lower id', () => {
    expect(topLogprobs([1, 3, 2, 3], 2, 0)).toEqual([
      { tokenId: 1, logprob: 3 },
      { tokenId: 3, logprob: 3 },
    ]);
    expect(topLogprobs([1, 3, 2, 3], 3, 1).map((t) => t.tokenId)).toEqual([1, 3, 2]);
    expect(topLogprobs([5], 4, 5)).toEqual([{ tokenId: 0, logprob: 0 }]);
  });

  it('masks and biases what is sampled but reports the raw model logprobs', () => {
    const logits = new Float32Array([0, 5, 1]);
    const lse = Math.log(1 + Math.exp(5) + Math.exp(1));
    const masked = sampleRow(
      logits,
      { sampling: greedy, topLogprobs: 2, allowedTokenIds: [0, 2] },
      createRng(1),
    );
    expect(masked.tokenId).toBe(2);
    expect(masked.logprob).toBeCloseTo(1 - lse, 6);
    expect(masked.top.map((t) => t.tokenId)).toEqual([1, 2]); // top of the raw distribution
    const biased = sampleRow(
      logits,
      { sampling: greedy, topLogprobs: 0, logitBias: new Map([[0, 100]]) },
      createRng(1),
    );
    expect(biased).toEqual({ tokenId: 0, logprob: 0 - lse, top: [] });
    const plain = sampleRow(logits, { sampling: greedy, topLogprobs: 0 }, createRng(1));
    expect(plain.tokenId).toBe(1);
  });

  it('never samples outside the allowed set at any temperature', () => {
    const logits = new Float32Array([3, 2, 1, 0, -1]);
    const rng = createRng(7);
    for (let i = 0; i < 200; i++) {
      const { tokenId } = sampleRow(
        logits,
        { sampling: { temperature: 2, topP: 1, topK: 0 }, topLogprobs: 0, allowedTokenIds: [1, 3] },
        rng,
      );
      expect([1, 3]).toContain(tokenId);
    }
  });
});
