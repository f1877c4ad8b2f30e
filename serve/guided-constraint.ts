// A grammar held to the tokens of one or more sequences: each sequence keeps its automaton state
// (grammar-automaton.ts) and advances it by the bytes of every sampled token; the ids allowed next
// are those whose bytes keep the state alive (a vocabulary-trie walk), plus the stop tokens once the
// output is complete, as vLLM's structured-output backends end at an accepting state. Masks are cached
// by state key, so a state that recurs (inside a long string, in the next turn of an episode) costs a
// map lookup. Special tokens other than the stops are never allowed: their text is skipped in the
// output, so the text would not be what the automaton saw.
import { type AutomatonState, canonicalState } from './automaton-state.ts';
import { stateAccepts, startState, stepState } from './grammar-automaton.ts';
import type { GrammarNode } from './grammar-node.ts';
import type { VocabularyTrie } from './vocabulary-trie.ts';

export interface GuidedVocabulary {
  /** Every id's bytes, one entry per id of the model's vocabulary. */
  readonly tokenBytes: readonly Uint8Array[];
  /** The ids that may spell text (special tokens left out). */
  readonly trie: VocabularyTrie;
}

/** Most token ids one constraint keeps in its mask cache (4 bytes each). */
const maxCachedIds = 4_000_000;

export interface ConstraintStats {
  /** Masks computed by walking the vocabulary, and masks found in the cache. */
  walks: number;
  hits: number;
}

export class GuidedConstraint {
  private readonly masks = new Map<string, Int32Array>();
  private cachedIds = 0;
  private readonly stops: ReadonlySet<number>;
  private readonly start: { state: AutomatonState; key: string };
  readonly stats: ConstraintStats = { walks: 0, hits: 0 };

  constructor(
    grammar: GrammarNode,
    private readonly vocabulary: GuidedVocabulary,
    /** May follow a complete output; never part of it. */
    readonly stopTokenIds: readonly number[],
  ) {
    this.stops = new Set(stopTokenIds);
    this.start = canonicalState(startState(grammar));
  }

  /** A sequence at the grammar's start. */
  sequence(): GuidedSequence {
    return new GuidedSequence(this, this.start.state, this.start.key);
  }

  /** @internal The ids allowed after `state` (ascending within the walk's byte order, stops last). */
  maskOf(state: AutomatonState, key: string): Int32Array {
    const cached = this.masks.get(key);
    if (cached) {
      // Re-inserted: the map's order is least recently used first.
      this.masks.delete(key);
      this.masks.set(key, cached);
      this.stats.hits += 1;
      return cached;
    }
    this.stats.walks += 1;
    const ids: number[] = [];
    const stops = this.stops;
    this.vocabulary.trie.walk(state, stepState, (tokenId) => {
      if (!stops.has(tokenId)) ids.push(tokenId);
    });
    if (stateAccepts(state)) ids.push(...this.stopTokenIds);
    const mask = Int32Array.from(ids);
    this.masks.set(key, mask);
    this.cachedIds += mask.length;
    for (const [oldKey, oldMask] of this.masks) {
      if (this.cachedIds <= maxCachedIds || oldKey === key) break;
      this.masks.delete(oldKey);
      this.cachedIds -= oldMask.length;
    }
    return mask;
  }

  /** @internal */
  advance(state: AutomatonState, tokenId: number): AutomatonState {
    let next: AutomatonState | undefined = state;
    for (const byte of this.vocabulary.tokenBytes[tokenId] ?? []) {
      next = stepState(next, byte);
      if (!next) break;
    }
    if (!next || (this.vocabulary.tokenBytes[tokenId]?.length ?? 0) === 0) {
      throw new Error(`token ${tokenId} does not continue the guided output`);
    }
    return next;
  }

  isStop(tokenId: number): boolean {
    return this.stops.has(tokenId);
  }
}

/** One sequence under a constraint. */
export class GuidedSequence {
  private mask: Int32Array | undefined;
  private ended = false;

  constructor(
    private readonly constraint: GuidedConstraint,
    private state: AutomatonState,
    private key: string,
  ) {}

  /** The ids that may come next; empty when nothing may (the output is complete and no stop token is set). */
  allowed(): Int32Array {
    if (this.ended) return new Int32Array(0);
    this.mask ??= this.constraint.maskOf(this.state, this.key);
    return this.mask;
  }

  /** Takes a sampled token; a stop token ends the sequence. Throws for a token the mask did not allow. */
  advance(tokenId: number): void {
    if (this.constraint.isStop(tokenId) && stateAccepts(this.state)) {
      this.ended = true;
      return;
    }
    const next = canonicalState(this.constraint.advance(this.state, tokenId));
    this.state = next.state;
    this.key = next.key;
    this.mask = undefined;
  }

  /** The output so far is complete. */
  get complete(): boolean {
    return this.ended || stateAccepts(this.state);
  }
}
