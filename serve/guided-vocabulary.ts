// A tokenizer's vocabulary as guided decoding needs it (every id's bytes and the byte trie of the ids
// that spell text), built once per tokenizer, and the constraints of recent guided requests, kept so
// that an episode's next turn (same tools, same schema) finds its masks cached. Leaves out the masks
// themselves (guided-constraint.ts).
import type { ChatTokenizer } from '../model/tokenizer/index.ts';
import { GuidedConstraint, type GuidedVocabulary } from './guided-constraint.ts';
import type { Guided } from './guided-decoding.ts';
import { VocabularyTrie } from './vocabulary-trie.ts';

const vocabularies = new WeakMap<ChatTokenizer, GuidedVocabulary>();

/** Every id's bytes up to the model's vocabulary size, and the trie without special tokens. */
export function guidedVocabulary(tokenizer: ChatTokenizer, vocabSize: number): GuidedVocabulary {
  const known = vocabularies.get(tokenizer);
  if (known && known.tokenBytes.length === vocabSize) return known;
  const tokenBytes = Array.from({ length: vocabSize }, (_, id) => tokenizer.tokenBytes(id));
  // Special tokens are the added tokens that decoding with skip_special_tokens drops (`<|im_end|>`,
  // not Qwen's `<tool_call>`, which is marked special: false so tool-call parsers see it).
  const special = new Set(
    Object.values(tokenizer.specialTokenIds).filter(
      (id) => id < vocabSize && tokenizer.decode([id], { skipSpecialTokens: true }) === '',
    ),
  );
  const vocabulary = { tokenBytes, trie: VocabularyTrie.build(tokenBytes, special) };
  vocabularies.set(tokenizer, vocabulary);
  return vocabulary;
}

/** Constraints kept per tokenizer, least recently used first. */
const maxConstraints = 16;
const constraints = new WeakMap<ChatTokenizer, Map<string, GuidedConstraint>>();

/** The constraint for `guided` ending on `stopTokenIds`, shared with recent requests that asked the same. */
export function constraintFor(
  tokenizer: ChatTokenizer,
  vocabSize: number,
  guided: Guided,
  stopTokenIds: readonly number[],
): GuidedConstraint {
  const vocabulary = guidedVocabulary(tokenizer, vocabSize);
  let recent = constraints.get(tokenizer);
  if (!recent) {
    recent = new Map();
    constraints.set(tokenizer, recent);
  }
  const key = `${vocabSize}\n${[...stopTokenIds].sort((a, b) => a - b).join(',')}\n${guided.key}`;
  let constraint = recent.get(key);
  if (constraint) recent.delete(key);
  else constraint = new GuidedConstraint(guided.grammar, vocabulary, [...new Set(stopTokenIds)]);
  recent.set(key, constraint);
  for (const oldKey of recent.keys()) {
    if (recent.size <= maxConstraints) break;
    recent.delete(oldKey);
  }
  return constraint;
}
