// JSON Schema `pattern` (an ECMA-262 regular expression, JSON Schema 2020-12 validation §6.3.3, matched
// anywhere in the string unless anchored) compiled to a DFA over the bytes a string under a pattern is
// written in: printable ASCII without `"` and `\`, so every character is one unescaped byte and the
// string's length is its byte count. Characters a pattern allows outside that set are never written
// (the output is still valid, only narrower). The subset: literals, `.`, classes `[...]`/`[^...]`,
// `\d \D \w \W \s \S`, escapes of syntax characters, `\xHH`/`\uHHHH`, groups `(...)`/`(?:...)`/
// `(?<name>...)`, `|`, `* + ? {n} {n,} {n,m}` (lazy or not: the language is the same), `^` only at the
// start and `$` only at the end (parsed in json-pattern-syntax.ts, which refuses the rest by name).
// `live` also answers the length bounds (minLength/maxLength), so a string never walks into a state from
// which no allowed length can end it: the automaton's no-dead-end invariant (grammar-automaton.ts).
import { PatternProblem, parsePattern, type CharSet, type Regex } from './json-pattern-syntax.ts';

export { PatternProblem };

/** Bytes a pattern-constrained string is written in: 0x20–0x7e but `"` and `\`. */
const alphabet: readonly number[] = Array.from({ length: 0x7f - 0x20 }, (_, i) => 0x20 + i).filter(
  (byte) => byte !== 0x22 && byte !== 0x5c,
);

/** Larger automata are refused: they cost memory per request and time per step. */
const maxNfaStates = 20_000;
const maxDfaStates = 4_000;
/** Length bounds beyond this, under a pattern, are refused (the liveness table is states × length). */
export const maxPatternLength = 4096;

/** A DFA over bytes: `next[state * 128 + byte]` is the next state or -1; every state can reach an accepting one. */
export interface PatternDfa {
  readonly next: Int32Array;
  readonly accept: Uint8Array;
  readonly states: number;
}

export interface StringPattern {
  readonly dfa: PatternDfa;
  /** The bound string length range (code points = bytes here). */
  readonly minLength: number;
  readonly maxLength: number;
  /** Counts above this decide nothing: maxLength when finite, else minLength. */
  readonly cap: number;
  /** Whether from `state`, after `chars` characters, some allowed ending is still reachable. */
  live(state: number, chars: number): boolean;
}

// ---- Thompson NFA, then subset construction ---------------------------------------------------------

interface Nfa {
  /** Per state: the set it consumes and the state after it, or -1 for an epsilon-only state. */
  readonly sets: (CharSet | null)[];
  readonly to: number[];
  readonly epsilons: number[][];
}

function buildNfa(regex: Regex): { nfa: Nfa; start: number; end: number } {
  const nfa: Nfa = { sets: [], to: [], epsilons: [] };
  const state = () => {
    if (nfa.sets.length >= maxNfaStates) throw new PatternProblem('the pattern is too large to guide');
    nfa.sets.push(null);
    nfa.to.push(-1);
    nfa.epsilons.push([]);
    return nfa.sets.length - 1;
  };
  const build = (node: Regex): [number, number] => {
    switch (node.t) {
      case 'set': {
        const [from, to] = [state(), state()];
        nfa.sets[from] = node.set;
        nfa.to[from] = to;
        return [from, to];
      }
      case 'seq': {
        const start = state();
        let end = start;
        for (const item of node.items) {
          const [from, to] = build(item);
          nfa.epsilons[end]?.push(from);
          end = to;
        }
        return [start, end];
      }
      case 'alt': {
        const [start, end] = [state(), state()];
        for (const option of node.options) {
          const [from, to] = build(option);
          nfa.epsilons[start]?.push(from);
          nfa.epsilons[to]?.push(end);
        }
        return [start, end];
      }
      case 'repeat': {
        const start = state();
        let end = start;
        for (let i = 0; i < node.min; i++) {
          const [from, to] = build(node.item);
          nfa.epsilons[end]?.push(from);
          end = to;
        }
        if (node.max === Infinity) {
          const [from, to] = build(node.item);
          nfa.epsilons[end]?.push(from);
          nfa.epsilons[to]?.push(from);
          const after = state();
          nfa.epsilons[end]?.push(after);
          nfa.epsilons[to]?.push(after);
          return [start, after];
        }
        const after = state();
        for (let i = node.min; i < node.max; i++) {
          nfa.epsilons[end]?.push(after);
          const [from, to] = build(node.item);
          nfa.epsilons[end]?.push(from);
          end = to;
        }
        nfa.epsilons[end]?.push(after);
        return [start, after];
      }
    }
  };
  const [start, end] = build(regex);
  return { nfa, start, end };
}

function closure(nfa: Nfa, states: Iterable<number>): number[] {
  const seen = new Set<number>();
  const stack = [...states];
  while (stack.length > 0) {
    const at = stack.pop() as number;
    if (seen.has(at)) continue;
    seen.add(at);
    for (const next of nfa.epsilons[at] ?? []) stack.push(next);
  }
  return [...seen].sort((a, b) => a - b);
}

function toDfa(regex: Regex): PatternDfa {
  const { nfa, start, end } = buildNfa(regex);
  const ids = new Map<string, number>();
  const sets: number[][] = [];
  const edges: number[] = [];
  const accepts: number[] = [];
  const intern = (members: number[]) => {
    const key = members.join(',');
    let id = ids.get(key);
    if (id === undefined) {
      if (sets.length >= maxDfaStates) throw new PatternProblem('the pattern is too large to guide');
      id = sets.length;
      ids.set(key, id);
      sets.push(members);
      accepts.push(members.includes(end) ? 1 : 0);
    }
    return id;
  };
  intern(closure(nfa, [start]));
  // Bytes that move a state's members to the same NFA states (all digits, say) share one closure.
  const targets = new Map<string, number>();
  for (let at = 0; at < sets.length; at++) {
    const moves: number[][] = Array.from({ length: 128 }, () => []);
    for (const member of sets[at] as number[]) {
      const set = nfa.sets[member];
      if (!set) continue;
      for (const byte of alphabet) if (set[byte]) moves[byte]?.push(nfa.to[member] as number);
    }
    for (const byte of alphabet) {
      const moved = moves[byte] as number[];
      if (moved.length === 0) {
        edges[at * 128 + byte] = -1;
        continue;
      }
      const key = moved.join(',');
      let target = targets.get(key);
      if (target === undefined) {
        target = intern(closure(nfa, moved));
        targets.set(key, target);
      }
      edges[at * 128 + byte] = target;
    }
  }
  return pruned(sets.length, (state, byte) => edges[state * 128 + byte] ?? -1, accepts);
}

/** The DFA with states that cannot reach an accepting one cut away; state 0 stays the start. */
function pruned(
  states: number,
  step: (state: number, byte: number) => number,
  accepts: number[],
): PatternDfa {
  const useful = new Uint8Array(states);
  for (let s = 0; s < states; s++) useful[s] = accepts[s] ?? 0;
  for (let changed = true; changed; ) {
    changed = false;
    for (let s = 0; s < states; s++) {
      if (useful[s]) continue;
      if (
        alphabet.some((byte) => {
          const to = step(s, byte);
          return to >= 0 && useful[to] === 1;
        })
      ) {
        useful[s] = 1;
        changed = true;
      }
    }
  }
  const next = new Int32Array(states * 128).fill(-1);
  for (let s = 0; s < states; s++) {
    for (const byte of alphabet) {
      const to = step(s, byte);
      if (to >= 0 && useful[to]) next[s * 128 + byte] = to;
    }
  }
  return { next, accept: Uint8Array.from(accepts), states };
}

/** A DFA for a pattern; throws PatternProblem for what the subset leaves out. */
export function patternDfa(source: string): PatternDfa {
  return toDfa(parsePattern(source));
}

/** The DFA accepting what both accept (a `format` and a `pattern` on one string). */
export function intersectDfas(a: PatternDfa, b: PatternDfa): PatternDfa {
  const ids = new Map<number, number>();
  const pairs: [number, number][] = [];
  const edges: number[] = [];
  const accepts: number[] = [];
  const intern = (x: number, y: number) => {
    const key = x * b.states + y;
    let id = ids.get(key);
    if (id === undefined) {
      if (pairs.length >= maxDfaStates)
        throw new PatternProblem('the patterns are too large to guide together');
      id = pairs.length;
      ids.set(key, id);
      pairs.push([x, y]);
      accepts.push(a.accept[x] && b.accept[y] ? 1 : 0);
    }
    return id;
  };
  intern(0, 0);
  for (let at = 0; at < pairs.length; at++) {
    const [x, y] = pairs[at] as [number, number];
    for (const byte of alphabet) {
      const toA = a.next[x * 128 + byte] as number;
      const toB = b.next[y * 128 + byte] as number;
      edges[at * 128 + byte] = toA < 0 || toB < 0 ? -1 : intern(toA, toB);
    }
  }
  return pruned(pairs.length, (state, byte) => edges[state * 128 + byte] ?? -1, accepts);
}

/**
 * The pattern under length bounds, or null when no string of an allowed length matches. `live(q, c)`
 * is a table over c in [0, cap], cap = maxLength when finite (nothing longer is allowed), else
 * minLength (past it, only reaching an accepting state matters), filled from the cap down.
 */
export function boundPattern(dfa: PatternDfa, minLength: number, maxLength: number): StringPattern | null {
  const finite = maxLength !== Number.POSITIVE_INFINITY;
  const cap = finite ? maxLength : minLength;
  if (cap > maxPatternLength) {
    throw new PatternProblem(`length bounds above ${maxPatternLength} beside a pattern or format`);
  }
  const { states, next, accept } = dfa;
  const table = new Uint8Array(states * (cap + 1));
  const width = cap + 1;
  const reaches = (s: number, c: number) =>
    alphabet.some((byte) => {
      const to = next[s * 128 + byte] as number;
      return to >= 0 && table[to * width + c] === 1;
    });
  for (let c = cap; c >= 0; c--) {
    for (let s = 0; s < states; s++) {
      let ok: boolean;
      if (accept[s] === 1 && c >= minLength) ok = true;
      else if (c < cap) ok = reaches(s, c + 1);
      // At the cap: nothing longer when the bound is finite; else any state with an edge left can
      // still reach an accepting one (pruned cut every edge into a state that cannot).
      else ok = !finite && alphabet.some((byte) => (next[s * 128 + byte] as number) >= 0);
      table[s * width + c] = ok ? 1 : 0;
    }
  }
  if (!table[0]) return null;
  return {
    dfa,
    minLength,
    maxLength,
    cap,
    live: (state, chars) => chars <= maxLength && table[state * width + Math.min(chars, cap)] === 1,
  };
}
