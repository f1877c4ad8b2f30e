import { beforeAll, describe, expect, it } from 'vitest';
import { attentionMaskBias, maskedScore } from './attention-mask.ts';
import { useBackend } from '../test/support/model-fixtures.ts';

describe('attentionMaskBias', () => {
  beforeAll(() => useBackend('cpu'));

  it('masks padding keys and keys after each query (causal, after P cached positions)', async () => {
    const keyValid = [
      [0, 1, 1, 1, 1, 1], // left padding
      [1, 1, 1, 1, 0, 0], // right padding
    ];
    const queryLength = 3; // P = 6 − 3 = 3 cached keys
    const got = (await attentionMaskBias(keyValid, queryLength).array()) as number[][][][][];
    expect(got.length).toBe(2);
    for (const [row, valid] of keyValid.entries())
      for (let t = 0; t < queryLength; t++)
        for (let key = 0; key < 6; key++) {
          // The definition: key s is visible to query t iff s ≤ P + t and s is a real token.
          const visible = key <= 3 + t && valid[key] === 1;
          expect(got[row]?.[0]?.[0]?.[t]?.[key], `row ${row}, query ${t}, key ${key}`).toBe(
            visible ? 0 : maskedScore,
          );
        }
    expect(() => attentionMaskBias([[1, 1]], 3)).toThrow(/cannot cover/);
  });
});
