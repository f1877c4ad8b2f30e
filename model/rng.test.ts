// fillNormal is normal() written out for speed: it must give the very same draws, in order, whatever
// the chunking (weight init streams a tensor in chunks and must equal the in-memory init).
import { describe, expect, it } from 'vitest';
import { createRng } from './rng.ts';

describe('createRng', () => {
  it('fillNormal gives normal() · std draw for draw, across chunks of any length (odd ones split a pair)', () => {
    const reference = createRng(5);
    const want = Float32Array.from({ length: 1001 }, () => reference.normal() * 0.02);
    const chunked = createRng(5);
    const got = new Float32Array(1001);
    let offset = 0;
    for (const length of [1, 2, 3, 0, 500, 495]) {
      chunked.fillNormal(got.subarray(offset, offset + length), 0.02);
      offset += length;
    }
    expect(offset).toBe(1001);
    expect(got).toEqual(want);
    // Both streams stand at the same place afterwards, a pair's spare value included.
    expect(chunked.normal()).toBe(reference.normal());
    expect(chunked.next()).toBe(reference.next());
  });

  it('draws standard normals: mean ≈ 0 and std ≈ 1 over 10⁵ values', () => {
    const values = new Float32Array(100_000);
    createRng(1).fillNormal(values, 1);
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    const std = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length);
    // Standard errors: 1/√n ≈ 0.0032 for the mean, 1/√(2n) ≈ 0.0022 for the std; 4σ bounds.
    expect(Math.abs(mean)).toBeLessThan(0.013);
    expect(Math.abs(std - 1)).toBeLessThan(0.009);
  });
});
