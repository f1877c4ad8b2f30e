// promptLogprobs on a hand-computed case: V = 3, logits row [0, ln 2, ln 5] → p = [1/8, 2/8, 5/8].
import { describe, expect, it } from 'vitest';
import { promptLogprobs } from './prompt-logprobs.ts';

describe('promptLogprobs', () => {
  it("scores each prompt token with the previous position's logits, with its rank and the top ones", () => {
    const logits = Float32Array.from([0, Math.log(2), Math.log(5), 9, 9, 9]); // [T = 2, V = 3]
    const out = promptLogprobs(logits, [2, 0], 3, 1, (id) => `t${id}`);
    expect(out[0]).toBeNull();
    const entry = out[1] as Record<string, { logprob: number; rank: number; decoded_token: string }>;
    // Token 0: log(1/8), rank 3; the top-1 is token 2: log(5/8), rank 1.
    expect(Object.keys(entry)).toEqual(['0', '2']);
    expect(entry['0']?.logprob).toBeCloseTo(Math.log(1 / 8), 6);
    expect(entry['0']?.rank).toBe(3);
    expect(entry['2']).toMatchObject({ rank: 1, decoded_token: 't2' });
    expect(entry['2']?.logprob).toBeCloseTo(Math.log(5 / 8), 6);
  });
});
