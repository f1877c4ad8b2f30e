// Conversions between float32 and the two 16-bit float formats of Hugging Face checkpoints:
// IEEE 754 binary16 (F16) and bfloat16 (BF16). Narrowing rounds to nearest, ties to even, like
// PyTorch's `.to(torch.float16 / torch.bfloat16)`. Leaves out every other dtype.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

let f16Table: Float32Array | undefined;

/** binary16 bits → float32, through a 65,536-entry table built on first use (256 KB). */
export function f16ToF32(bits: Uint16Array): Float32Array {
  const table = f16Table ?? buildF16Table();
  f16Table = table;
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = table[bits[i] as number] as number;
  return out;
}

function buildF16Table(): Float32Array {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >>> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    // binary16: exponent bias 15, 10 mantissa bits; exponent 0 is subnormal, 31 is inf/NaN.
    if (exponent === 0) table[h] = sign * mantissa * 2 ** -24;
    else if (exponent === 31) table[h] = mantissa === 0 ? sign * Infinity : Number.NaN;
    else table[h] = sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return table;
}

/** float32 → binary16 bits, round to nearest even; overflow gives ±Inf, NaN stays NaN. Writes into
 * `out` (at least as long as `values`) when given. */
export function f32ToF16(
  values: Float32Array,
  out: Uint16Array = new Uint16Array(values.length),
): Uint16Array {
  for (let i = 0; i < values.length; i++) out[i] = oneF32ToF16(values[i] as number);
  return out;
}

function oneF32ToF16(value: number): number {
  f32[0] = value;
  const bits = u32[0] as number;
  const sign = (bits >>> 16) & 0x8000;
  const abs = bits & 0x7fffffff;
  if (abs >= 0x7f800000) return abs > 0x7f800000 ? sign | 0x7e00 : sign | 0x7c00;
  // Below 2^-14 the result is subnormal: count units of 2^-24 and round that count half to even.
  if (abs < 0x38800000) {
    f32[0] = Math.abs(value);
    return sign | roundHalfEven((f32[0] as number) * 2 ** 24);
  }
  // Normal range: rebias the exponent (127 → 15) and keep the top 10 of 23 mantissa bits. A carry out
  // of the mantissa correctly bumps the exponent, and past 65504 it lands on Inf (0x7c00).
  const rebased = abs - ((127 - 15) << 23);
  if (rebased >= 0x1f << 23) return sign | 0x7c00;
  let half = rebased >>> 13;
  const rest = rebased & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half += 1;
  return sign | Math.min(half, 0x7c00);
}

function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const fraction = x - floor;
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** bfloat16 bits → float32: the bits are the top half of a float32. */
export function bf16ToF32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = (bits[i] as number) << 16;
  return out;
}

/** float32 → bfloat16 bits, round to nearest even (0.02 → 0x3ca4 = 0.02001953125); NaN stays NaN.
 * Writes into `out` (at least as long as `values`) when given. */
export function f32ToBf16(
  values: Float32Array,
  out: Uint16Array = new Uint16Array(values.length),
): Uint16Array {
  const inBits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  for (let i = 0; i < values.length; i++) {
    const bits = inBits[i] as number;
    if ((bits & 0x7fffffff) > 0x7f800000) {
      out[i] = (bits >>> 16) | 0x40;
      continue;
    }
    // Adding 0x7fff plus the lowest kept bit rounds the dropped half to nearest, ties to even.
    out[i] = ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
  }
  return out;
}
