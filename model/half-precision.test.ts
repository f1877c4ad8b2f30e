import { describe, expect, it } from 'vitest';
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from './half-precision.ts';

const f16 = (x: number) => (f32ToF16(new Float32Array([x]))[0] as number).toString(16).padStart(4, '0');
const bf16 = (x: number) => (f32ToBf16(new Float32Array([x]))[0] as number).toString(16).padStart(4, '0');

describe('binary16', () => {
  it('encodes hand-computed values, rounding to nearest even', () => {
    expect(f16(1)).toBe('3c00'); // exponent 15, mantissa 0
    expect(f16(-2)).toBe('c000'); // sign, exponent 16
    // 0.1 = 1.6·2^-4: exponent 11 (0b01011), mantissa 0.6·1024 = 614.4 → 614 = 0x266 → 0x2c00 | 0x266
    expect(f16(0.1)).toBe('2e66');
    expect(f16(65504)).toBe('7bff'); // largest finite
    expect(f16(65519)).toBe('7bff'); // below the midpoint to 65536
    expect(f16(65520)).toBe('7c00'); // the midpoint rounds to even: overflow to Inf
    expect(f16(2 ** -24)).toBe('0001'); // smallest subnormal
    expect(f16(2 ** -25)).toBe('0000'); // half of it: tie, rounds to even (0)
    expect(f16(1.5 * 2 ** -25)).toBe('0001'); // above the tie
    expect(f16(1 + 2 ** -11)).toBe('3c00'); // tie between mantissa 0 and 1 → even 0
    expect(f16(1 + 3 * 2 ** -11)).toBe('3c02'); // tie between mantissa 1 and 2 → even 2
    expect(f16(-0)).toBe('8000');
    expect(f16(Number.POSITIVE_INFINITY)).toBe('7c00');
    expect(f16(Number.NaN)).toBe('7e00');
  });

  it('decodes every bit pattern back to the value it encodes', () => {
    const all = new Uint16Array(65536).map((_, i) => i);
    const values = f16ToF32(all);
    expect(values[0x3c00]).toBe(1);
    expect(values[0x2e66]).toBe(0.0999755859375); // (1 + 614/1024) / 16
    expect(values[0x0001]).toBe(2 ** -24);
    expect(values[0xfc00]).toBe(Number.NEGATIVE_INFINITY);
    expect(Number.isNaN(values[0x7e01])).toBe(true);
    // Re-encoding every non-NaN decoded value gives the same bits back.
    const back = f32ToF16(values);
    const mismatches = [...back.keys()].filter((i) => !Number.isNaN(values[i]) && back[i] !== i);
    expect(mismatches).toEqual([]);
  });
});

describe('bfloat16', () => {
  it('keeps the top 16 bits of a float32, rounding to nearest even', () => {
    expect(bf16(1)).toBe('3f80');
    expect(bf16(0.02)).toBe('3ca4'); // the research notes' check value
    expect(bf16ToF32(new Uint16Array([0x3ca4]))[0]).toBe(0.02001953125);
    expect(bf16(1 + 2 ** -8)).toBe('3f80'); // tie between mantissa 0 and 1 → 0
    expect(bf16(1 + 3 * 2 ** -8)).toBe('3f82'); // tie between 1 and 2 → 2
    expect(bf16(-3.5)).toBe('c060');
    expect(Number.isNaN(bf16ToF32(new Uint16Array([parseInt(bf16(Number.NaN), 16)]))[0])).toBe(true);
  });
});
