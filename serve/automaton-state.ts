// The automaton's state (grammar-automaton.ts runs it): the frames a thread stacks, one per grammar
// node being matched, and the key that makes equal states equal, which the token masks are cached by.
// Types and identity only; stepping lives in grammar-automaton.ts and the string and number frames in
// json-string-frame.ts and json-number-frame.ts.
import type {
  ArrayNode,
  FreeTextNode,
  JsonNode,
  ObjectNode,
  RepeatNode,
  SequenceNode,
} from './grammar-node.ts';
import { type NumberFrame, numberFrameKey } from './json-number-frame.ts';
import { type StringFrame, stringFrameKey } from './json-string-frame.ts';

export interface RootFrame {
  readonly k: 'root';
  readonly done: boolean;
}
export interface ValueFrame {
  readonly k: 'value';
  readonly node: JsonNode;
  readonly ws: number;
}
export type ObjectPhase = 'open' | 'key' | 'colon' | 'value' | 'after' | 'comma';
export interface ObjectFrame {
  readonly k: 'object';
  readonly node: ObjectNode;
  readonly phase: ObjectPhase;
  /** Keys written so far (only tracked when the object has known properties or required keys). */
  readonly seen: readonly string[];
  readonly key: string;
  readonly ws: number;
}
export type ArrayPhase = 'open' | 'value' | 'after';
export interface ArrayFrame {
  readonly k: 'array';
  readonly node: ArrayNode;
  readonly phase: ArrayPhase;
  readonly count: number;
  readonly ws: number;
}
export interface TextFrame {
  readonly k: 'text';
  readonly id: number;
  readonly bytes: Uint8Array;
  readonly at: number;
}
export interface SequenceFrame {
  readonly k: 'sequence';
  readonly node: SequenceNode;
  readonly index: number;
}
export interface RepeatFrame {
  readonly k: 'repeat';
  readonly node: RepeatNode;
  readonly count: number;
}
export interface FreeFrame {
  readonly k: 'free';
  readonly node: FreeTextNode;
  readonly match: number;
}
export type Frame =
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
      return stringFrameKey(frame);
    case 'number':
      return numberFrameKey(frame);
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
