// The vocabulary as a byte trie: tokens that share leading bytes share a path, so a guided-decoding
// mask is one walk that steps the automaton once per trie edge and drops a whole subtree as soon as
// its prefix cannot continue (the token-trie walk of Willard & Louf 2023, "Efficient Guided
// Generation for Large Language Models", arXiv:2307.09702, done per state instead of precompiled).
// Flat typed arrays, children as first-child / next-sibling links in byte order.

export class VocabularyTrie {
  private constructor(
    /** Per node: its first child, or -1. Node 0 is the root (no bytes). */
    readonly firstChild: Int32Array,
    readonly nextSibling: Int32Array,
    /** The byte on the edge into each node. */
    readonly edgeByte: Uint8Array,
    /** Per node: where its tokens start in `tokenIds`, and how many end there. */
    readonly tokenStart: Int32Array,
    readonly tokenCount: Int32Array,
    readonly tokenIds: Int32Array,
  ) {}

  get nodes(): number {
    return this.firstChild.length;
  }

  /** Every id with bytes, except `excluded`; ids with the same bytes end on the same node. */
  static build(tokenBytes: readonly Uint8Array[], excluded: ReadonlySet<number>): VocabularyTrie {
    const ids: number[] = [];
    tokenBytes.forEach((bytes, tokenId) => {
      if (bytes.length > 0 && !excluded.has(tokenId)) ids.push(tokenId);
    });
    ids.sort((a, b) => compareBytes(tokenBytes[a] as Uint8Array, tokenBytes[b] as Uint8Array) || a - b);
    const firstChild = [-1];
    const nextSibling = [-1];
    const lastChild = [-1];
    const edgeByte = [0];
    const tokenStart = [0];
    const tokenCount = [0];
    const tokenIds: number[] = [];
    /** path[d]: the node for the first d bytes of the previous token. */
    const path = [0];
    let previous: Uint8Array = new Uint8Array(0);
    for (const tokenId of ids) {
      const bytes = tokenBytes[tokenId] as Uint8Array;
      let shared = 0;
      while (shared < bytes.length && shared < previous.length && bytes[shared] === previous[shared])
        shared++;
      path.length = shared + 1;
      for (let depth = shared; depth < bytes.length; depth++) {
        const parent = path[depth] as number;
        const node = firstChild.length;
        firstChild.push(-1);
        nextSibling.push(-1);
        lastChild.push(-1);
        edgeByte.push(bytes[depth] as number);
        tokenStart.push(0);
        tokenCount.push(0);
        // Sorted input: a new child is always its parent's last.
        if (lastChild[parent] === -1) firstChild[parent] = node;
        else nextSibling[lastChild[parent] as number] = node;
        lastChild[parent] = node;
        path.push(node);
      }
      const end = path[bytes.length] as number;
      // Ids with equal bytes are adjacent in sorted order, so a node's tokens are contiguous.
      if (tokenCount[end] === 0) tokenStart[end] = tokenIds.length;
      tokenCount[end] = (tokenCount[end] as number) + 1;
      tokenIds.push(tokenId);
      previous = bytes;
    }
    return new VocabularyTrie(
      Int32Array.from(firstChild),
      Int32Array.from(nextSibling),
      Uint8Array.from(edgeByte),
      Int32Array.from(tokenStart),
      Int32Array.from(tokenCount),
      Int32Array.from(tokenIds),
    );
  }

  /**
   * Every token whose bytes take `start` through `step` without dying: a depth-first walk that carries
   * the stepped state down each edge. `visit` sees each such id once.
   */
  walk<S>(start: S, step: (state: S, byte: number) => S | undefined, visit: (tokenId: number) => void): void {
    const { firstChild, nextSibling, edgeByte, tokenStart, tokenCount, tokenIds } = this;
    const descend = (node: number, state: S) => {
      for (let child = firstChild[node] as number; child !== -1; child = nextSibling[child] as number) {
        const next = step(state, edgeByte[child] as number);
        if (next === undefined) continue;
        const first = tokenStart[child] as number;
        const end = first + (tokenCount[child] as number);
        for (let at = first; at < end; at++) visit(tokenIds[at] as number);
        if (firstChild[child] !== -1) descend(child, next);
      }
    };
    descend(0, start);
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const difference = (a[i] as number) - (b[i] as number);
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}
