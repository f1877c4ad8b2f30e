// Runs a grammar (grammar-node.ts) over bytes: a pushdown automaton whose state is a small set of
// threads, each an immutable stack of frames, so a state is copied by reference and stepping never
// mutates (the vocabulary walk, vocabulary-trie.ts, tries every token from one state). Threads fork
// where the grammar cannot tell yet (two anyOf options that both start with `{`, a repeat that may end
// or go on) and die when a byte does not fit. The invariant every step keeps: a live thread can always
// reach the end, so a mask built from it never leads the model into a dead end. JSON is RFC 8259:
// strings must be valid UTF-8 (RFC 3629), no control characters, no leading zeros. Deliberate limits:
// whitespace runs of at most `maxWhitespace` bytes (a model cannot spend its tokens on indentation),
// numbers that stay finite doubles, integers without fraction or exponent, and object keys and enum strings of objects with known
// properties written as JSON.stringify writes them (no optional escapes such as `\/` or `\u0061`).
import type {
  ArrayNode,
  FreeTextNode,
  GrammarNode,
  JsonNode,
  NumberNode,
  ObjectNode,
  RepeatNode,
  SequenceNode,
} from './grammar-node.ts';

/** Longest run of JSON whitespace bytes accepted between two tokens. */
export const maxWhitespace = 32;
/**
 * Longest integer part and exponent of a number: RFC 8259 (section 6) lets implementations limit range,
 * and with these every number parses to a finite IEEE 754 double (below 10^200 · 10^99).
 */
export const maxIntegerDigits = 200;
export const maxExponentDigits = 2;

interface RootFrame {
  readonly k: 'root';
  readonly done: boolean;
}
interface ValueFrame {
  readonly k: 'value';
  readonly node: JsonNode;
  readonly ws: number;
}
type ObjectPhase = 'open' | 'key' | 'colon' | 'value' | 'after' | 'comma';
interface ObjectFrame {
  readonly k: 'object';
  readonly node: ObjectNode;
  readonly phase: ObjectPhase;
  /** Keys written so far (only tracked when the object has known properties or required keys). */
  readonly seen: readonly string[];
  readonly key: string;
  readonly ws: number;
}
type ArrayPhase = 'open' | 'value' | 'after';
interface ArrayFrame {
  readonly k: 'array';
  readonly node: ArrayNode;
  readonly phase: ArrayPhase;
  readonly count: number;
  readonly ws: number;
}
interface StringFrame {
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
type NumberPhase = 'minus' | 'zero' | 'int' | 'dot' | 'frac' | 'e' | 'exp-sign' | 'exp';
interface NumberFrame {
  readonly k: 'number';
  readonly node: NumberNode;
  readonly phase: NumberPhase;
  readonly negative: boolean;
  /** Integer digits, kept only when the node has bounds. */
  readonly digits: string;
  /** Digits of the integer part, then of the exponent (each bounded so the value stays a finite double). */
  readonly length: number;
}
interface TextFrame {
  readonly k: 'text';
  readonly id: number;
  readonly bytes: Uint8Array;
  readonly at: number;
}
interface SequenceFrame {
  readonly k: 'sequence';
  readonly node: SequenceNode;
  readonly index: number;
}
interface RepeatFrame {
  readonly k: 'repeat';
  readonly node: RepeatNode;
  readonly count: number;
}
interface FreeFrame {
  readonly k: 'free';
  readonly node: FreeTextNode;
  readonly match: number;
}
type Frame =
  | RootFrame
  | ValueFrame
  | ObjectFrame
  | ArrayFrame
  | StringFrame
  | NumberFrame
  | TextFrame
  | SequenceFrame
  | RepeatFrame
  | FreeFrame;

export interface Thread {
  readonly frame: Frame;
  readonly up: Thread | null;
}

/** A non-empty set of live threads. */
export type AutomatonState = readonly Thread[];

const on = (frame: Frame, up: Thread | null): Thread => ({ frame, up });

const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39;
const isHex = (byte: number) =>
  isDigit(byte) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46);
const hexValue = (byte: number) => (isDigit(byte) ? byte - 0x30 : (byte | 0x20) - 0x61 + 10);

// ---- pushing a node: the threads that expect it ------------------------------------------------

function push(up: Thread, node: GrammarNode, out: Thread[]): void {
  switch (node.kind) {
    case 'json':
      out.push(on({ k: 'value', node: node.value, ws: 0 }, up));
      return;
    case 'text':
      out.push(on({ k: 'text', id: node.id, bytes: node.bytes, at: 0 }, up));
      return;
    case 'sequence':
      push(on({ k: 'sequence', node, index: 0 }, up), node.items[0] as GrammarNode, out);
      return;
    case 'alternatives':
      for (const option of node.options) push(up, option, out);
      return;
    case 'repeat':
      push(on({ k: 'repeat', node, count: 0 }, up), node.item, out);
      return;
    case 'free-text':
      out.push(on({ k: 'free', node, match: 0 }, up));
      return;
  }
}

/** The threads that expect `grammar` from the start. */
export function startState(grammar: GrammarNode): AutomatonState {
  const out: Thread[] = [];
  push(on({ k: 'root', done: false }, null), grammar, out);
  return out;
}

// ---- completing a frame: its parent takes over ----------------------------------------------------

/** The frame above `up` finished (a key passes its raw text); the parent's threads go to `out`. */
function complete(up: Thread | null, raw: string, out: Thread[]): void {
  if (!up) return;
  const frame = up.frame;
  switch (frame.k) {
    case 'root':
      out.push(on({ k: 'root', done: true }, null));
      return;
    case 'object':
      if (frame.phase === 'key') out.push(on({ ...frame, phase: 'colon', key: raw, ws: 0 }, up.up));
      else {
        const tracked = tracksKeys(frame.node) && frame.key !== otherKey;
        const seen = tracked ? [...frame.seen, frame.key] : frame.seen;
        out.push(on({ ...frame, phase: 'after', seen, key: '', ws: 0 }, up.up));
      }
      return;
    case 'array':
      out.push(on({ ...frame, phase: 'after', count: frame.count + 1, ws: 0 }, up.up));
      return;
    case 'sequence': {
      const index = frame.index + 1;
      if (index === frame.node.items.length) complete(up.up, '', out);
      else push(on({ ...frame, index }, up.up), frame.node.items[index] as GrammarNode, out);
      return;
    }
    case 'repeat': {
      const count = frame.count + 1;
      if (count >= frame.node.min) complete(up.up, '', out);
      if (count < frame.node.max) push(on({ ...frame, count }, up.up), frame.node.more, out);
      return;
    }
    case 'free':
      out.push(on({ ...frame, match: 0 }, up.up));
      return;
    case 'value':
    case 'string':
    case 'number':
    case 'text':
      throw new Error(`a ${frame.k} frame has no children`);
  }
}

const tracksKeys = (node: ObjectNode) => node.properties.size > 0 || node.required.length > 0;

// ---- stepping one byte ------------------------------------------------------------------------------

function stepThread(thread: Thread, byte: number, out: Thread[]): void {
  const frame = thread.frame;
  switch (frame.k) {
    case 'root':
      return;
    case 'value':
      stepValue(frame, thread.up, byte, out);
      return;
    case 'object':
      stepObject(frame, thread, byte, out);
      return;
    case 'array':
      stepArray(frame, thread, byte, out);
      return;
    case 'string':
      stepString(frame, thread, byte, out);
      return;
    case 'number':
      stepNumber(frame, thread, byte, out);
      return;
    case 'text':
      if (frame.bytes[frame.at] !== byte) return;
      if (frame.at + 1 === frame.bytes.length) complete(thread.up, '', out);
      else out.push(on({ ...frame, at: frame.at + 1 }, thread.up));
      return;
    case 'free':
      stepFree(frame, thread.up, byte, out);
      return;
    case 'sequence':
    case 'repeat':
      throw new Error(`a ${frame.k} frame is never on top`);
  }
}

function stepValue(frame: ValueFrame, up: Thread | null, byte: number, out: Thread[]): void {
  if (isWhitespace(byte)) {
    if (frame.ws < maxWhitespace) out.push(on({ ...frame, ws: frame.ws + 1 }, up));
    return;
  }
  const options = frame.node.kind === 'any-of' ? frame.node.options : [frame.node];
  for (const option of options) {
    switch (option.kind) {
      case 'object':
        if (byte === 0x7b)
          out.push(on({ k: 'object', node: option, phase: 'open', seen: [], key: '', ws: 0 }, up));
        break;
      case 'array':
        if (byte === 0x5b) out.push(on({ k: 'array', node: option, phase: 'open', count: 0, ws: 0 }, up));
        break;
      case 'string':
        if (byte === 0x22) {
          const counted = option.minLength > 0 || option.maxLength < Number.POSITIVE_INFINITY;
          const frame: StringFrame = {
            ...emptyString,
            owner: option.id,
            canonical: option.values !== null,
            counted,
            values: option.values,
            open: option.values === null,
            minLength: option.minLength,
            maxLength: option.maxLength,
          };
          out.push(option.values ? on(frame, up) : internString(frame, up));
        }
        break;
      case 'number':
        startNumber(option, up, byte, out);
        break;
      case 'token':
        if (option.bytes[0] === byte) {
          if (option.bytes.length === 1) complete(up, '', out);
          else out.push(on({ k: 'text', id: option.id, bytes: option.bytes, at: 1 }, up));
        }
        break;
    }
  }
}

function stepObject(frame: ObjectFrame, thread: Thread, byte: number, out: Thread[]): void {
  const { node } = frame;
  if (isWhitespace(byte) && frame.phase !== 'key' && frame.phase !== 'value') {
    if (frame.ws < maxWhitespace) out.push(on({ ...frame, ws: frame.ws + 1 }, thread.up));
    return;
  }
  switch (frame.phase) {
    case 'open':
    case 'after':
      if (byte === 0x7d) {
        if (node.required.every((key) => frame.seen.includes(key))) complete(thread.up, '', out);
        return;
      }
      if (frame.phase === 'after') {
        if (byte === 0x2c && canAddKey(node, frame.seen)) {
          out.push(on({ ...frame, phase: 'comma', ws: 0 }, thread.up));
        }
        return;
      }
      if (byte === 0x22 && canAddKey(node, frame.seen)) startKey(frame, thread.up, out);
      return;
    case 'comma':
      if (byte === 0x22) startKey(frame, thread.up, out);
      return;
    case 'colon':
      if (byte === 0x3a) {
        const value = (tracksKeys(node) && node.properties.get(frame.key)) || node.additional;
        if (value) {
          out.push(
            on({ k: 'value', node: value, ws: 0 }, on({ ...frame, phase: 'value', ws: 0 }, thread.up)),
          );
        }
      }
      return;
    case 'key':
    case 'value':
      throw new Error('an object waiting for a child is never on top');
  }
}

function canAddKey(node: ObjectNode, seen: readonly string[]): boolean {
  if (node.additional) return true;
  for (const key of node.properties.keys()) if (!seen.includes(key)) return true;
  return false;
}

/** What an object passes for a key that is none of its known properties. */
const otherKey = '\u0000';

function startKey(frame: ObjectFrame, up: Thread | null, out: Thread[]): void {
  const { node } = frame;
  const parent = on({ ...frame, phase: 'key', ws: 0 }, up);
  const key: StringFrame = { ...emptyString, owner: node.id, isKey: true, open: node.additional !== null };
  if (!tracksKeys(node)) {
    out.push(internString(key, parent));
    return;
  }
  // Keys are written as JSON.stringify writes them, so equal keys have equal bytes.
  const unseen = [...node.properties.keys()].filter((name) => !frame.seen.includes(name));
  // Keys that may not be written again matter only where other keys may: elsewhere `unseen` decides.
  const blocked = node.additional ? [...frame.seen, ...node.forbidden] : null;
  out.push(on({ ...key, canonical: true, values: unseen, blocked }, parent));
}

function stepArray(frame: ArrayFrame, thread: Thread, byte: number, out: Thread[]): void {
  const { node } = frame;
  if (isWhitespace(byte)) {
    if (frame.ws < maxWhitespace) out.push(on({ ...frame, ws: frame.ws + 1 }, thread.up));
    return;
  }
  if (byte === 0x5d) {
    if (frame.count >= node.minItems) complete(thread.up, '', out);
    return;
  }
  if (!node.items || frame.count >= node.maxItems) return;
  const waiting = on({ ...frame, phase: 'value', ws: 0 }, thread.up);
  if (frame.phase === 'after') {
    if (byte === 0x2c) out.push(on({ k: 'value', node: node.items, ws: 0 }, waiting));
    return;
  }
  // 'open': the byte starts the first item.
  stepValue({ k: 'value', node: node.items, ws: 0 }, waiting, byte, out);
}

const emptyString: StringFrame = {
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
  raw: '',
  chars: 0,
  esc: 0,
  code: 0,
  need: 0,
  lo: 0,
  hi: 0,
};

/**
 * Untracked string frames are shared per parent: equal states are then the same object, which is
 * what lets stepState's memo serve the vocabulary walk (tokens inside a string all lead to a handful
 * of states).
 */
const interned = new WeakMap<Thread, Map<string, Thread>>();

function internString(frame: StringFrame, up: Thread | null): Thread {
  if (!up) return on(frame, up);
  let table = interned.get(up);
  if (!table) {
    table = new Map();
    interned.set(up, table);
  }
  const key = `${frame.owner},${frame.isKey ? 1 : 0},${frame.chars},${frame.esc},${frame.code},${frame.need},${frame.lo},${frame.hi}`;
  let thread = table.get(key);
  if (!thread) {
    thread = on(frame, up);
    table.set(key, thread);
  }
  return thread;
}

/** The escapes JSON.stringify writes itself (`\b \f \n \r \t` and `\u00xx` for other control characters). */
const shortEscapes = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const shortEscapeCodes = new Set([0x08, 0x0c, 0x0a, 0x0d, 0x09]);

function stepString(frame: StringFrame, thread: Thread, byte: number, out: Thread[]): void {
  const plain = frame.esc === 0 && frame.need === 0;
  // The hot path of the vocabulary walk: a printable ASCII character inside an untracked string.
  if (plain && frame.values === null && byte >= 0x20 && byte < 0x80 && byte !== 0x22 && byte !== 0x5c) {
    if (!frame.counted) out.push(thread);
    else if (frame.chars < frame.maxLength)
      out.push(internString({ ...frame, chars: frame.chars + 1 }, thread.up));
    return;
  }
  if (plain && byte === 0x22) {
    closeString(frame, thread, out);
    return;
  }
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
  if (!changes) return;
  if (frame.values === null) {
    out.push(internString({ ...frame, ...changes }, thread.up));
    return;
  }
  const at = frame.raw.length;
  const values = frame.values.filter((value) => value.charCodeAt(at) === byte);
  const blocked = frame.blocked?.filter((value) => value.charCodeAt(at) === byte) ?? null;
  if (values.length === 0 && (blocked?.length ?? 0) === 0) {
    // None of the tracked values any more: another value if the string may take one.
    if (frame.open)
      out.push(internString({ ...frame, ...changes, values: null, blocked: null, raw: '' }, thread.up));
    return;
  }
  out.push(
    on({ ...frame, ...changes, values, blocked, raw: frame.raw + String.fromCharCode(byte) }, thread.up),
  );
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

function closeString(frame: StringFrame, thread: Thread, out: Thread[]): void {
  if (frame.counted && frame.chars < frame.minLength) return;
  let key = frame.isKey ? otherKey : '';
  if (frame.values !== null) {
    if (frame.values.includes(frame.raw)) key = frame.raw;
    else if (frame.blocked?.includes(frame.raw) || !frame.open) return;
  }
  complete(thread.up, key, out);
}

function startNumber(node: NumberNode, up: Thread | null, byte: number, out: Thread[]): void {
  const bounded = node.minimum !== undefined || node.maximum !== undefined;
  if (byte === 0x2d) {
    if (!bounded || integerFeasible(node, true, '')) {
      out.push(on({ k: 'number', node, phase: 'minus', negative: true, digits: '', length: 0 }, up));
    }
    return;
  }
  if (!isDigit(byte)) return;
  const digits = String.fromCharCode(byte);
  if (bounded && !integerFeasible(node, false, digits)) return;
  out.push(
    on(
      {
        k: 'number',
        node,
        phase: byte === 0x30 ? 'zero' : 'int',
        negative: false,
        digits: bounded ? digits : '',
        length: 1,
      },
      up,
    ),
  );
}

function stepNumber(frame: NumberFrame, thread: Thread, byte: number, out: Thread[]): void {
  const { node } = frame;
  const bounded = node.minimum !== undefined || node.maximum !== undefined;
  /** Moves to `phase`; `counted`: the byte is a digit of the integer part or of the exponent. */
  const go = (phase: NumberPhase, counted?: 'int' | 'exp') => {
    const integerDigit = counted === 'int';
    const digits = bounded && integerDigit ? frame.digits + String.fromCharCode(byte) : frame.digits;
    if (bounded && integerDigit && !integerFeasible(node, frame.negative, digits)) return false;
    const length = counted ? frame.length + 1 : phase === 'e' ? 0 : frame.length;
    if (length > (counted === 'exp' ? maxExponentDigits : maxIntegerDigits)) return false;
    out.push(on({ ...frame, phase, digits, length }, thread.up));
    return true;
  };
  const digit = isDigit(byte);
  switch (frame.phase) {
    case 'minus':
      if (digit) go(byte === 0x30 ? 'zero' : 'int', 'int');
      return;
    case 'dot':
      if (digit) go('frac');
      return;
    case 'e':
      if (digit) go('exp', 'exp');
      else if (byte === 0x2b || byte === 0x2d) go('exp-sign');
      return;
    case 'exp-sign':
      if (digit) go('exp', 'exp');
      return;
    case 'int':
      if (digit && go('int', 'int')) return;
      break;
    case 'frac':
      if (digit) {
        go('frac');
        return;
      }
      break;
    case 'exp':
      if (digit && go('exp', 'exp')) return;
      break;
    case 'zero':
      break;
  }
  if (!digit && !node.integer) {
    if (byte === 0x2e && (frame.phase === 'zero' || frame.phase === 'int')) {
      go('dot');
      return;
    }
    if ((byte === 0x65 || byte === 0x45) && frame.phase !== 'exp') {
      go('e');
      return;
    }
  }
  // Anything else ends the number (when it can end here) and belongs to the parent.
  if (!numberCanEnd(frame)) return;
  const parents: Thread[] = [];
  complete(thread.up, '', parents);
  for (const parent of parents) stepThread(parent, byte, out);
}

function numberCanEnd(frame: NumberFrame): boolean {
  if (frame.phase !== 'zero' && frame.phase !== 'int' && frame.phase !== 'frac' && frame.phase !== 'exp') {
    return false;
  }
  const { node } = frame;
  if (node.minimum === undefined && node.maximum === undefined) return true;
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

function stepFree(frame: FreeFrame, up: Thread | null, byte: number, out: Thread[]): void {
  const { trigger, fallback } = frame.node;
  let match = frame.match;
  while (match > 0 && trigger[match] !== byte) match = fallback[match - 1] as number;
  if (trigger[match] === byte) match++;
  if (match === trigger.length) {
    push(on({ ...frame, match: 0 }, up), frame.node.body, out);
    return;
  }
  out.push(match === frame.match ? on(frame, up) : on({ ...frame, match }, up));
}

/** Per state, what each byte steps it to (null: nothing), so states the walk meets again cost a lookup. */
const memo = new WeakMap<AutomatonState, Map<number, AutomatonState | null>>();
/** The one-thread state of each thread, so that equal threads give the same state object. */
const alone = new WeakMap<Thread, AutomatonState>();

/** The threads after one more byte; undefined when no thread takes it. */
export function stepState(state: AutomatonState, byte: number): AutomatonState | undefined {
  let row = memo.get(state);
  if (!row) {
    row = new Map();
    memo.set(state, row);
  }
  const known = row.get(byte);
  if (known !== undefined) return known ?? undefined;
  const out: Thread[] = [];
  for (const thread of state) stepThread(thread, byte, out);
  let next: AutomatonState | null = null;
  if (out.length === 1) {
    const thread = out[0] as Thread;
    next = alone.get(thread) ?? null;
    if (!next) {
      next = [thread];
      alone.set(thread, next);
    }
  } else if (out.length > 1) next = out;
  row.set(byte, next);
  return next ?? undefined;
}

function threadAccepts(thread: Thread): boolean {
  const frame = thread.frame;
  if (frame.k === 'root') return frame.done;
  if (frame.k === 'free') return threadAcceptsAbove(thread.up);
  if (frame.k === 'number' && numberCanEnd(frame)) {
    const parents: Thread[] = [];
    complete(thread.up, '', parents);
    return parents.some(threadAccepts);
  }
  return false;
}

/** Free text accepts when everything below it does (it is the grammar's last item). */
function threadAcceptsAbove(up: Thread | null): boolean {
  const parents: Thread[] = [];
  complete(up, '', parents);
  return parents.some(threadAccepts);
}

/** The output so far is complete: the sequence may stop here. */
export function stateAccepts(state: AutomatonState): boolean {
  return state.some(threadAccepts);
}

function frameKey(frame: Frame): string {
  switch (frame.k) {
    case 'root':
      return frame.done ? 'R1' : 'R0';
    case 'value':
      return `v${nodeId(frame.node)},${frame.ws}`;
    case 'object':
      return `o${frame.node.id},${frame.phase},${frame.ws},${JSON.stringify(frame.seen)},${JSON.stringify(frame.key)}`;
    case 'array':
      return `a${frame.node.id},${frame.phase},${frame.count},${frame.ws}`;
    case 'string':
      return `s${frame.owner},${frame.isKey ? 1 : 0},${frame.values === null ? 0 : 1},${JSON.stringify(frame.raw)},${frame.chars},${frame.esc},${frame.code},${frame.need},${frame.lo},${frame.hi}`;
    case 'number':
      return `n${frame.node.id},${frame.phase},${frame.negative ? 1 : 0},${frame.digits},${frame.length}`;
    case 'text':
      return `t${frame.id},${frame.at}`;
    case 'sequence':
      return `q${frame.node.id},${frame.index}`;
    case 'repeat':
      return `r${frame.node.id},${frame.count}`;
    case 'free':
      return `f${frame.node.id},${frame.match}`;
  }
}

const nodeId = (node: JsonNode) => node.id;

function threadKey(thread: Thread): string {
  let key = '';
  for (let at: Thread | null = thread; at; at = at.up) key += `${frameKey(at.frame)}|`;
  return key;
}

/**
 * The state without duplicate threads, and a key equal for equal states (threads that would accept
 * the same bytes): what the token masks are cached by.
 */
export function canonicalState(state: AutomatonState): { state: AutomatonState; key: string } {
  const byKey = new Map<string, Thread>();
  for (const thread of state) {
    const key = threadKey(thread);
    if (!byKey.has(key)) byKey.set(key, thread);
  }
  const keys = [...byKey.keys()].sort();
  return { state: keys.map((key) => byKey.get(key) as Thread), key: keys.join('\n') };
}
