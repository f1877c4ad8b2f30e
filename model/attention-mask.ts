// The additive attention mask: query t of a call that follows P cached positions may see key s when
// s ≤ P + t (causal) and key s is not padding. Built on the host; 0 where allowed, −1e9 where not
// (finite, so a fully masked padding row gives a uniform softmax instead of NaN).
// Legend: B batch, T new positions, S = P + T keys.
import * as tf from '@tensorflow/tfjs';

export const maskedScore = -1e9;

/** keyValid: B rows of S flags (1 = real token, 0 = padding). Returns [B, 1, 1, T, S]. */
export function attentionMaskBias(keyValid: readonly ArrayLike<number>[], queryLength: number): tf.Tensor {
  const b = keyValid.length;
  const s = keyValid[0]?.length ?? 0;
  const past = s - queryLength;
  if (past < 0) throw new RangeError(`attention mask: ${s} keys cannot cover ${queryLength} new positions`);
  const bias = new Float32Array(b * queryLength * s);
  const padding = new Float32Array(s); // one row's padding keys, masked
  for (let row = 0; row < b; row++) {
    const valid = keyValid[row] as ArrayLike<number>;
    if (valid.length !== s)
      throw new RangeError(`attention mask: row ${row} has ${valid.length} keys, row 0 has ${s}`);
    for (let key = 0; key < s; key++) padding[key] = valid[key] === 0 ? maskedScore : 0;
    // Each query's row: the padding pattern, then every key after P + t masked (causal).
    for (let t = 0; t < queryLength; t++) {
      const base = (row * queryLength + t) * s;
      bias.set(padding, base);
      bias.fill(maskedScore, base + past + t + 1, base + s);
    }
  }
  return tf.tensor(bias, [b, 1, 1, queryLength, s]);
}

/** RoPE positions from a padding mask, as transformers' generate does: cumsum(mask) − 1, 0 on padding. */
export function positionsFromMask(
  mask: readonly ArrayLike<number>[],
  pastLengths?: readonly number[],
): Int32Array[] {
  return mask.map((row, index) => {
    const out = new Int32Array(row.length);
    let seen = pastLengths?.[index] ?? 0;
    for (let t = 0; t < row.length; t++) {
      out[t] = row[t] === 0 ? 0 : seen;
      if (row[t] !== 0) seen += 1;
    }
    return out;
  });
}
