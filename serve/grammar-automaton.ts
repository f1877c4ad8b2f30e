// Runs a grammar (grammar-node.ts) over bytes: a pushdown automaton whose state is a small set of
// threads, each an immutable stack of frames, so a state is copied by reference and stepping never
// mutates (the vocabulary walk, vocabulary-trie.ts, tries every token from one state). Threads fork
// where the grammar cannot tell yet (two anyOf options that both start with `{`, a repeat that may end
// or go on) and die when a byte does not fit. The invariant every step keeps: a live thread can always
// reach the end, so a mask built from it never leads the model into a dead end. JSON is RFC 8259:
// strings must be valid UTF-8 (RFC 3629), no control characters, no leading zeros. Deliberate limits:
// whitespace runs of at most `maxWhitespace` bytes (a model cannot spend its tokens on indentation),
// numbers that stay finite doubles (json-number-frame.ts), and keys and enum strings in the one
// spelling JSON.stringify writes (json-string-frame.ts). The frames and a state's identity are in
// automaton-state.ts.
import type { GrammarNode, ObjectNode } from './grammar-node.ts';
import { numberCanEnd, startNumberFrame, stepNumberFrame } from './json-number-frame.ts';
import {
  emptyString,
  otherKey,
  type StringFrame,
  stepStringFrame,
  stringFrameKey,
} from './json-string-frame.ts';
import type {
  ArrayFrame,
  AutomatonState,
  FreeFrame,
  Frame,
  ObjectFrame,
  Thread,
  ValueFrame,
} from './automaton-state.ts';

/** Longest run of JSON whitespace bytes accepted between two tokens. */
export const maxWhitespace = 32;

const on = (frame: Frame, up: Thread | null): Thread => ({ frame, up });

const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

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
    case 'string': {
      const next = stepStringFrame(frame, byte);
      if (!next) return;
      if (next.k === 'close') complete(thread.up, next.key, out);
      else if (next === frame) out.push(thread);
      else out.push(next.values === null ? internString(next, thread.up) : on(next, thread.up));
      return;
    }
    case 'number': {
      const next = stepNumberFrame(frame, byte);
      if (next === 'ends') {
        // The byte ends the number and belongs to what follows it.
        const parents: Thread[] = [];
        complete(thread.up, '', parents);
        for (const parent of parents) stepThread(parent, byte, out);
      } else if (next) out.push(on(next, thread.up));
      return;
    }
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
            pattern: option.pattern,
          };
          out.push(option.values ? on(frame, up) : internString(frame, up));
        }
        break;
      case 'number': {
        const frame = startNumberFrame(option, byte);
        if (frame) out.push(on(frame, up));
        break;
      }
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
  const key = stringFrameKey(frame);
  let thread = table.get(key);
  if (!thread) {
    thread = on(frame, up);
    table.set(key, thread);
  }
  return thread;
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
