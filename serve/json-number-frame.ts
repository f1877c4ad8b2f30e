// One JSON number's bytes (RFC 8259, section 6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`)
// as pure transitions of the automaton frame that reads it, with integer bounds checked digit by digit
// so that a prefix is only allowed while some integer in range starts with it. Leaves out the stack
// (grammar-automaton.ts). Limits: integers have no fraction or exponent, and the integer part and the
// exponent are bounded so every number parses to a finite IEEE 754 double (RFC 8259 lets
// implementations limit range; here below 10^200 · 10^99). Bounded numbers that need not be integers
// are written without an exponent and checked in decimal the same way (json-number-bounds.ts).
import type { NumberNode } from './grammar-node.ts';
import { decimalFeasible, decimalWithin } from './json-number-bounds.ts';

export const maxIntegerDigits = 200;
export const maxExponentDigits = 2;

type NumberPhase = 'minus' | 'zero' | 'int' | 'dot' | 'frac' | 'e' | 'exp-sign' | 'exp';

export interface NumberFrame {
  readonly k: 'number';
  readonly node: NumberNode;
  readonly phase: NumberPhase;
  readonly negative: boolean;
  /** Integer digits, kept only when the node has bounds. */
  readonly digits: string;
  /** Fraction digits after the dot, kept only under decimal bounds; undefined before a dot. */
  readonly fraction: string | undefined;
  /** Digits of the integer part, then of the exponent. */
  readonly length: number;
}

const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39;
const bounded = (node: NumberNode) =>
  node.minimum !== undefined || node.maximum !== undefined || node.decimalBounds !== null;

/** Whether some number in range starts with this sign, integer digits and fraction. */
function feasible(node: NumberNode, negative: boolean, digits: string, fraction?: string): boolean {
  if (node.decimalBounds) {
    return decimalFeasible(node.decimalBounds, negative, digits, fraction, maxIntegerDigits);
  }
  return integerFeasible(node, negative, digits);
}

/** The frame after a number's first byte, or undefined when no number in range starts with it. */
export function startNumberFrame(node: NumberNode, byte: number): NumberFrame | undefined {
  if (byte === 0x2d) {
    if (bounded(node) && !feasible(node, true, '')) return undefined;
    return { k: 'number', node, phase: 'minus', negative: true, digits: '', fraction: undefined, length: 0 };
  }
  if (!isDigit(byte)) return undefined;
  const digits = String.fromCharCode(byte);
  if (bounded(node) && !feasible(node, false, digits)) return undefined;
  const phase = byte === 0x30 ? 'zero' : 'int';
  const kept = bounded(node) ? digits : '';
  return { k: 'number', node, phase, negative: false, digits: kept, fraction: undefined, length: 1 };
}

/**
 * The frame after `byte`; "ends" when the byte cannot continue the number but the number is complete
 * (the byte then belongs to what follows it); undefined when neither.
 */
export function stepNumberFrame(frame: NumberFrame, byte: number): NumberFrame | 'ends' | undefined {
  const { node } = frame;
  /** Moves to `phase`; `counted`: the byte is a digit of the integer part or of the exponent. */
  const go = (phase: NumberPhase, counted?: 'int' | 'exp'): NumberFrame | undefined => {
    const integerDigit = counted === 'int' && bounded(node);
    const digits = integerDigit ? frame.digits + String.fromCharCode(byte) : frame.digits;
    if (integerDigit && !feasible(node, frame.negative, digits)) return undefined;
    let fraction = frame.fraction;
    if (node.decimalBounds) {
      // No exponent under decimal bounds; a dot or a fraction digit must leave a number in range.
      if (phase === 'e') return undefined;
      if (phase === 'dot') fraction = '';
      else if (phase === 'frac') fraction = `${frame.fraction ?? ''}${String.fromCharCode(byte)}`;
      if ((phase === 'dot' || phase === 'frac') && !feasible(node, frame.negative, digits, fraction)) {
        return undefined;
      }
    }
    const length = counted ? frame.length + 1 : phase === 'e' ? 0 : frame.length;
    if (length > (counted === 'exp' ? maxExponentDigits : maxIntegerDigits)) return undefined;
    return { ...frame, phase, digits, fraction, length };
  };
  const digit = isDigit(byte);
  let next: NumberFrame | undefined;
  switch (frame.phase) {
    case 'minus':
      return digit ? go(byte === 0x30 ? 'zero' : 'int', 'int') : undefined;
    case 'dot':
      return digit ? go('frac') : undefined;
    case 'e':
      if (digit) return go('exp', 'exp');
      return byte === 0x2b || byte === 0x2d ? go('exp-sign') : undefined;
    case 'exp-sign':
      return digit ? go('exp', 'exp') : undefined;
    case 'int':
      if (digit) next = go('int', 'int');
      break;
    case 'frac':
      if (digit) next = go('frac');
      break;
    case 'exp':
      if (digit) next = go('exp', 'exp');
      break;
    case 'zero':
      break;
  }
  if (next) return next;
  if (!digit && !node.integer) {
    if (byte === 0x2e && (frame.phase === 'zero' || frame.phase === 'int')) return go('dot');
    if ((byte === 0x65 || byte === 0x45) && frame.phase !== 'exp') return go('e');
  }
  return numberCanEnd(frame) ? 'ends' : undefined;
}

/** The number read so far is complete (and in range). */
export function numberCanEnd(frame: NumberFrame): boolean {
  if (frame.phase !== 'zero' && frame.phase !== 'int' && frame.phase !== 'frac' && frame.phase !== 'exp') {
    return false;
  }
  const { node } = frame;
  if (!bounded(node)) return true;
  if (node.decimalBounds) {
    const fraction = frame.fraction ?? '';
    const magnitude = BigInt(`${frame.digits}${fraction}`);
    return decimalWithin(node.decimalBounds, {
      m: frame.negative ? -magnitude : magnitude,
      s: fraction.length,
    });
  }
  const value = frame.negative ? -BigInt(frame.digits) : BigInt(frame.digits);
  return (
    (node.minimum === undefined || value >= node.minimum) &&
    (node.maximum === undefined || value <= node.maximum)
  );
}

/**
 * Whether some integer in [minimum, maximum] is written starting with this sign and these digits:
 * the magnitudes with prefix d are [d·10^k, (d+1)·10^k − 1] for k = 0, 1, …
 */
export function integerFeasible(
  node: Pick<NumberNode, 'minimum' | 'maximum'>,
  negative: boolean,
  digits: string,
): boolean {
  const low = node.minimum;
  const high = node.maximum;
  const within = (a: bigint, b: bigint) =>
    (low === undefined || b >= low) && (high === undefined || a <= high);
  // Only the sign so far: some integer ≤ −1 (bounds are checked at compile time to hold low ≤ high).
  if (digits === '') return low === undefined || low <= -1n;
  if (digits === '0') return within(0n, 0n);
  const d = BigInt(digits);
  for (let scale = 1n; ; scale *= 10n) {
    const smallest = d * scale;
    const largest = (d + 1n) * scale - 1n;
    if (negative ? within(-largest, -smallest) : within(smallest, largest)) return true;
    if (!negative && high !== undefined && smallest > high) return false;
    if (negative && low !== undefined && -smallest < low) return false;
  }
}

/** What distinguishes this frame from others of the same node, for state keys. */
export const numberFrameKey = (frame: NumberFrame) =>
  `n${frame.node.id},${frame.phase},${frame.negative ? 1 : 0},${frame.digits},${frame.fraction ?? '-'},${frame.length}`;
