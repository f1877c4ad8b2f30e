// Bounds on JSON numbers that are not integers (`minimum`, `maximum`, `exclusiveMinimum`,
// `exclusiveMaximum` on `type: "number"`), checked exactly in decimal: a bound is the decimal its
// shortest round-trip spelling names (ECMA-262 Number::toString, what JSON.stringify writes), and a
// prefix of a number is allowed while some number in range starts with it. Bounded numbers are written
// without an exponent (json-number-frame.ts), so a prefix spans an interval: "-"? digits "." fraction.
// Leaves out the automaton frame itself.

/** m · 10^−s. */
export interface Decimal {
  readonly m: bigint;
  readonly s: number;
}

export interface Bound {
  readonly value: Decimal;
  readonly exclusive: boolean;
}

export interface DecimalBounds {
  readonly low: Bound | undefined;
  readonly high: Bound | undefined;
}

/** The decimal a finite double's shortest spelling names (`0.1` is 1/10, not the double nearest it). */
export function decimalOf(value: number): Decimal {
  const [mantissa = '0', exponent = '0'] = String(value).toLowerCase().split('e');
  const [whole = '0', fraction = ''] = mantissa.split('.');
  const shift = fraction.length - Number(exponent);
  const digits = BigInt(`${whole}${fraction}`);
  return shift >= 0 ? { m: digits, s: shift } : { m: digits * 10n ** BigInt(-shift), s: 0 };
}

function compare(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.s, b.s);
  const left = a.m * 10n ** BigInt(scale - a.s);
  const right = b.m * 10n ** BigInt(scale - b.s);
  return left < right ? -1 : left > right ? 1 : 0;
}

const negate = (value: Decimal): Decimal => ({ m: -value.m, s: value.s });

/** Whether `value` is within the bounds. */
export function decimalWithin(bounds: DecimalBounds, value: Decimal): boolean {
  const { low, high } = bounds;
  if (low && compare(value, low.value) < (low.exclusive ? 1 : 0)) return false;
  if (high && compare(value, high.value) > (high.exclusive ? -1 : 0)) return false;
  return true;
}

/** Whether any number lies within the bounds. */
export function boundsAdmitSome({ low, high }: DecimalBounds): boolean {
  if (!low || !high) return true;
  const order = compare(low.value, high.value);
  return order < 0 || (order === 0 && !low.exclusive && !high.exclusive);
}

/** Whether [from, to) meets the bounds (`to` undefined: no end). A meeting holds a decimal: its ends are decimals. */
function meets(bounds: DecimalBounds, from: Decimal, to: Decimal | undefined): boolean {
  const { low, high } = bounds;
  if (high && compare(from, high.value) > (high.exclusive ? -1 : 0)) return false;
  if (low && to && compare(to, low.value) <= 0) return false;
  return true;
}

/** The bounds as seen by the magnitude of a negative number: x in [L, H] iff −x in [−H, −L]. */
const mirrored = (bounds: DecimalBounds): DecimalBounds => ({
  low: bounds.high && { value: negate(bounds.high.value), exclusive: bounds.high.exclusive },
  high: bounds.low && { value: negate(bounds.low.value), exclusive: bounds.low.exclusive },
});

/**
 * Whether some number in range starts with this prefix. The magnitudes written with integer digits d
 * and no dot yet lie in [d·10^k, (d+1)·10^k) for k = 0, 1, … (k = 0 only for d = 0: no leading zeros),
 * within `maxIntegerDigits` digits; with a dot and fraction f, in [d.f, d.f + 10^−|f|); after a lone
 * "-", in [0, ∞). A negative number −m is in range when m is within the mirrored bounds.
 */
export function decimalFeasible(
  bounds: DecimalBounds,
  negative: boolean,
  digits: string,
  fraction: string | undefined,
  maxIntegerDigits: number,
): boolean {
  const own = negative ? mirrored(bounds) : bounds;
  if (digits === '') return meets(own, { m: 0n, s: 0 }, undefined);
  if (fraction !== undefined) {
    const from = { m: BigInt(`${digits}${fraction}`), s: fraction.length };
    return meets(own, from, { m: from.m + 1n, s: from.s });
  }
  const d = BigInt(digits);
  for (let k = 0; digits.length + k <= maxIntegerDigits; k++) {
    const scale = 10n ** BigInt(k);
    const from = { m: d * scale, s: 0 };
    if (meets(own, from, { m: (d + 1n) * scale, s: 0 })) return true;
    // The intervals only grow from here on; past the upper bound none can meet it.
    if (digits === '0' || (own.high && compare(from, own.high.value) > 0)) return false;
  }
  return false;
}
