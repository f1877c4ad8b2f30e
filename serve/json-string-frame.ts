// One JSON string's bytes after its opening quote (RFC 8259, section 7; UTF-8 as RFC 3629, section 4,
// allows it) as pure transitions of the automaton frame that reads it: escapes, UTF-8 sequences,
// length bounds in code points, and the values (enum strings, an object's known keys) the bytes so far
// may still spell. Leaves out the stack (grammar-automaton.ts). Strings with values are written as
// JSON.stringify writes them (no optional escapes such as `\/` or `\u0061`), so equal values have
// equal bytes and a byte-wise prefix test decides. A string under a pattern (json-string-pattern.ts)
// is written in unescaped printable ASCII, its DFA stepped per byte.
import type { StringPattern } from './json-string-pattern.ts';

export interface StringFrame {
  readonly k: 'string';
  /** The string node's id, or the object's for a key. */
  readonly owner: number;
  readonly isKey: boolean;
  readonly canonical: boolean;
  readonly counted: boolean;
  /**
   * While the raw bytes are tracked: the values (raw byte strings) that may end the string and that
   * the bytes so far begin; null once untracked (any value, or keys none of which it can be any more).
   */
  readonly values: readonly string[] | null;
  /** While tracked: values the bytes so far begin that may not end it (keys already written). */
  readonly blocked: readonly string[] | null;
  /** Values besides `values` may end it (keys of an object that takes other keys). */
  readonly open: boolean;
  readonly minLength: number;
  readonly maxLength: number;
  /** `pattern`/`format` with the length bounds; null: none. */
  readonly pattern: StringPattern | null;
  /** The pattern DFA's state. */
  readonly state: number;
  readonly raw: string;
  /** Characters so far (only counted when a length bound exists). */
  readonly chars: number;
  /** 0: plain; 1: after `\`; 2–5: expecting hex digit 1–4 of `\u`. */
  readonly esc: number;
  readonly code: number;
  /** UTF-8 continuation bytes still due, and the range the next one must be in. */
  readonly need: number;
  readonly lo: number;
  readonly hi: number;
}

/** The closing quote: `key` is the value for a key with values, `otherKey` for any other key. */
export interface StringClose {
  readonly k: 'close';
  readonly key: string;
}

/** What a key that is none of the tracked values closes with (a raw key never holds a NUL byte). */
export const otherKey = '\u0000';

export const emptyString: StringFrame = {
  k: 'string',
  owner: -1,
  isKey: false,
  canonical: false,
  counted: false,
  values: null,
  blocked: null,
  open: true,
  minLength: 0,
  maxLength: Number.POSITIVE_INFINITY,
  pattern: null,
  state: 0,
  raw: '',
  chars: 0,
  esc: 0,
  code: 0,
  need: 0,
  lo: 0,
  hi: 0,
};

const closeValue: StringClose = { k: 'close', key: '' };
const closeOther: StringClose = { k: 'close', key: otherKey };

/** The escapes JSON.stringify writes itself (`\b \f \n \r \t` and `\u00xx` for other control characters). */
const shortEscapes = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const shortEscapeCodes = new Set([0x08, 0x0c, 0x0a, 0x0d, 0x09]);

const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39;
const isHex = (byte: number) =>
  isDigit(byte) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46);
const hexValue = (byte: number) => (isDigit(byte) ? byte - 0x30 : (byte | 0x20) - 0x61 + 10);

/**
 * The frame after `byte` (the same object when nothing it tracks changed: the hot path of the
 * vocabulary walk), the close of the string, or undefined when the byte cannot come here.
 */
export function stepStringFrame(frame: StringFrame, byte: number): StringFrame | StringClose | undefined {
  if (frame.pattern !== null) return stepPattern(frame, frame.pattern, byte);
  const plain = frame.esc === 0 && frame.need === 0;
  if (plain && frame.values === null && byte >= 0x20 && byte < 0x80 && byte !== 0x22 && byte !== 0x5c) {
    if (!frame.counted) return frame;
    return frame.chars < frame.maxLength ? { ...frame, chars: frame.chars + 1 } : undefined;
  }
  if (plain && byte === 0x22) return closeString(frame);
  let changes: Partial<StringFrame> | undefined;
  const room = !frame.counted || frame.chars < frame.maxLength;
  const chars = frame.counted ? frame.chars + 1 : 0;
  if (frame.need > 0) {
    if (byte >= frame.lo && byte <= frame.hi) changes = { need: frame.need - 1, lo: 0x80, hi: 0xbf };
  } else if (frame.esc === 1) {
    if (shortEscapes.has(byte) || (!frame.canonical && byte === 0x2f)) changes = { esc: 0 };
    else if (byte === 0x75) changes = { esc: 2, code: 0 };
  } else if (frame.esc >= 2) {
    changes = hexDigit(frame, byte);
  } else if (byte < 0x20 || !room) {
    // Control characters must be escaped (RFC 8259, section 7); no room left under maxLength.
  } else if (byte === 0x5c) changes = { esc: 1, chars };
  else if (byte < 0x80) changes = { chars };
  // UTF-8 lead bytes and the range of the byte after them (RFC 3629, section 4).
  else if (byte >= 0xc2 && byte <= 0xdf) changes = { chars, need: 1, lo: 0x80, hi: 0xbf };
  else if (byte === 0xe0) changes = { chars, need: 2, lo: 0xa0, hi: 0xbf };
  else if (byte === 0xed) changes = { chars, need: 2, lo: 0x80, hi: 0x9f };
  else if (byte >= 0xe1 && byte <= 0xef) changes = { chars, need: 2, lo: 0x80, hi: 0xbf };
  else if (byte === 0xf0) changes = { chars, need: 3, lo: 0x90, hi: 0xbf };
  else if (byte >= 0xf1 && byte <= 0xf3) changes = { chars, need: 3, lo: 0x80, hi: 0xbf };
  else if (byte === 0xf4) changes = { chars, need: 3, lo: 0x80, hi: 0x8f };
  if (!changes) return undefined;
  if (frame.values === null) return { ...frame, ...changes };
  const at = frame.raw.length;
  const values = frame.values.filter((value) => value.charCodeAt(at) === byte);
  const blocked = frame.blocked?.filter((value) => value.charCodeAt(at) === byte) ?? null;
  if (values.length === 0 && (blocked?.length ?? 0) === 0) {
    // None of the tracked values any more: another value if the string may take one.
    return frame.open ? { ...frame, ...changes, values: null, blocked: null, raw: '' } : undefined;
  }
  return { ...frame, ...changes, values, blocked, raw: frame.raw + String.fromCharCode(byte) };
}

/** Under a pattern: the closing quote where the DFA accepts, else one more byte the DFA and the bounds allow. */
function stepPattern(
  frame: StringFrame,
  pattern: StringPattern,
  byte: number,
): StringFrame | StringClose | undefined {
  const { dfa } = pattern;
  if (byte === 0x22) {
    return dfa.accept[frame.state] === 1 && frame.chars >= pattern.minLength ? closeValue : undefined;
  }
  if (byte >= 0x80) return undefined;
  const state = dfa.next[frame.state * 128 + byte] as number;
  // The DFA has no edge for `"`, `\` and control bytes: such strings would need escapes.
  if (state < 0 || !pattern.live(state, frame.chars + 1)) return undefined;
  // Counting stops at the cap (past it the count decides nothing), so equal states keep equal keys.
  return { ...frame, state, chars: Math.min(frame.chars + 1, pattern.cap) };
}

function hexDigit(frame: StringFrame, byte: number): Partial<StringFrame> | undefined {
  if (!isHex(byte)) return undefined;
  const position = frame.esc - 2;
  const code = frame.code * 16 + hexValue(byte);
  if (frame.canonical) {
    // JSON.stringify writes `\u00xx` (lower-case) only for control characters without a short form.
    if (byte >= 0x41 && byte <= 0x46) return undefined;
    if (position < 2 && byte !== 0x30) return undefined;
    if (position === 2 && byte !== 0x30 && byte !== 0x31) return undefined;
    if (position === 3 && shortEscapeCodes.has(code)) return undefined;
  } else if (frame.counted && position === 1 && frame.code === 0xd && code >= 0xd8) {
    // Length bounds count code points; a surrogate pair written as two escapes is left out.
    return undefined;
  }
  return { esc: position === 3 ? 0 : frame.esc + 1, code };
}

function closeString(frame: StringFrame): StringClose | undefined {
  if (frame.counted && frame.chars < frame.minLength) return undefined;
  if (frame.values !== null) {
    if (frame.values.includes(frame.raw)) return frame.isKey ? { k: 'close', key: frame.raw } : closeValue;
    if (frame.blocked?.includes(frame.raw) || !frame.open) return undefined;
  }
  return frame.isKey ? closeOther : closeValue;
}

/** What distinguishes this frame from others of its owner, for state keys and for sharing frames. */
export const stringFrameKey = (frame: StringFrame) =>
  `s${frame.owner},${frame.isKey ? 1 : 0},${frame.values === null ? 0 : 1},${JSON.stringify(frame.raw)},${frame.chars},${frame.esc},${frame.code},${frame.need},${frame.lo},${frame.hi},${frame.state}`;
