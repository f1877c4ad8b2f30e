// Builds the tokenizer files of the tiny checkpoints: a Qwen2-format byte-level BPE tokenizer.json
// (256 byte tokens, merges for a short list of common pieces, ChatML specials) and a
// tokenizer_config.json carrying the tools-aware chat template. Leaves out writing files (model init).
//
// Format follows Qwen2.5's tokenizer.json/tokenizer_config.json (same normalizer, pre-tokenizer regex,
// ByteLevel post-processor/decoder, added-token flags, merges as "left right" strings, which every
// version of Hugging Face `tokenizers` reads). One deliberate difference: byte token ids equal byte
// values (id 10 is "\n"), which makes ids easy to check by hand.
import { Tokenizer } from '@huggingface/tokenizers';
import { byteToChar } from './byte-level.ts';
import { tinyChatTemplate } from './tiny-chat-template.ts';
import { tinyVocabularyPieces } from './tiny-vocabulary.ts';

/** The ChatML special tokens, in id order after the BPE vocabulary (Qwen2.5's relative order). */
const specialTokenTable = [
  { key: 'endOfText', content: '<|endoftext|>', special: true },
  { key: 'imStart', content: '<|im_start|>', special: true },
  { key: 'imEnd', content: '<|im_end|>', special: true },
  // Qwen marks the tool tags special: false, so decoding with skipSpecialTokens keeps them for the parser.
  { key: 'toolCallStart', content: '<tool_call>', special: false },
  { key: 'toolCallEnd', content: '</tool_call>', special: false },
  { key: 'toolResponseStart', content: '<tool_response>', special: false },
  { key: 'toolResponseEnd', content: '</tool_response>', special: false },
] as const;

type SpecialTokenKey = (typeof specialTokenTable)[number]['key'];

export interface TinyTokenizerOptions {
  /** The pieces to learn merges for. Default `tinyVocabularyPieces`; `[]` gives a bytes-only tokenizer. */
  readonly pieces?: readonly string[];
  /** Extra pieces to give merges after the default list, e.g. the environment's tool names. Default none. */
  readonly extraPieces?: readonly string[];
  /** The model's vocab_size is the token count rounded up to a multiple of this. Default 64 (GPU-friendly tiles; Qwen2.5 pads 151,665 tokens to 151,936 = 64 × 2,374). */
  readonly vocabMultiple?: number;
  /** `model_max_length` in tokenizer_config.json, in tokens. Default 4096, plenty for demo episodes. */
  readonly modelMaxLength?: number;
}

export interface TinyTokenizerFiles {
  /** Contents of tokenizer.json. */
  readonly tokenizerJson: Record<string, unknown>;
  /** Contents of tokenizer_config.json. */
  readonly tokenizerConfig: Record<string, unknown>;
  /** The model's `vocab_size`: `tokenCount` rounded up to `vocabMultiple`; ids ≥ tokenCount decode to nothing. */
  readonly vocabSize: number;
  /** Number of ids the tokenizer uses: 256 bytes + merged tokens + specials. */
  readonly tokenCount: number;
  readonly specialTokens: { readonly bos?: number; readonly eos: number; readonly pad: number } & Readonly<
    Record<SpecialTokenKey, number>
  >;
  /** `eos_token_id` for config.json / generation_config.json: `<|im_end|>` ends a turn, `<|endoftext|>` a document (Qwen2.5-Instruct lists both). */
  readonly eosTokenIds: readonly number[];
}

interface AddedTokenJson {
  id: number;
  content: string;
  single_word: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  special: boolean;
}

/** Qwen2's pre-tokenizer split pattern (tokenizer.json of Qwen/Qwen2.5-*): GPT-4-like, digits one by one. */
const qwen2SplitPattern =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const byteLevelStep = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };

function tokenizerJson(
  vocab: Record<string, number>,
  merges: string[],
  added: AddedTokenJson[],
): Record<string, unknown> {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: qwen2SplitPattern }, behavior: 'Isolated', invert: false },
        byteLevelStep,
      ],
    },
    post_processor: byteLevelStep,
    decoder: byteLevelStep,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
}

/** GPT-2's BPE on one pre-token: repeatedly merge every occurrence of the best-ranked adjacent pair. */
function applyMerges(symbols: readonly string[], ranks: ReadonlyMap<string, number>): string[] {
  let word = [...symbols];
  for (;;) {
    let best: string | undefined;
    let bestRank = Number.POSITIVE_INFINITY;
    for (let i = 0; i + 1 < word.length; i++) {
      const pair = `${word[i]} ${word[i + 1]}`;
      const rank = ranks.get(pair);
      if (rank !== undefined && rank < bestRank) [best, bestRank] = [pair, rank];
    }
    if (best === undefined) return word;
    const next: string[] = [];
    for (let i = 0; i < word.length; i++) {
      if (i + 1 < word.length && `${word[i]} ${word[i + 1]}` === best) {
        next.push(`${word[i]}${word[i + 1]}`);
        i++;
      } else next.push(word[i] as string);
    }
    word = next;
  }
}

/**
 * Adds merges until each pre-token of each piece is one token. Each new merge joins the first two
 * tokens the current merges leave; since it ranks after every earlier merge, BPE replays the earlier
 * merges unchanged and then applies it, so pieces made single earlier stay single.
 */
function deriveMerges(pieces: readonly string[], preTokenize: (text: string) => string[]) {
  const vocab: Record<string, number> = {};
  byteToChar.forEach((char, byte) => {
    vocab[char] = byte;
  });
  const ranks = new Map<string, number>();
  const merges: string[] = [];
  let nextId = byteToChar.length;
  for (const piece of pieces) {
    if (piece.length === 0) throw new Error('tiny tokenizer: vocabulary pieces must be non-empty strings');
    for (const preToken of preTokenize(piece.normalize('NFC'))) {
      let tokens = applyMerges([...preToken], ranks);
      while (tokens.length > 1) {
        const [left, right] = tokens as [string, string];
        const pair = `${left} ${right}`;
        ranks.set(pair, merges.length);
        merges.push(pair);
        if (vocab[left + right] === undefined) vocab[left + right] = nextId++;
        tokens = applyMerges([...preToken], ranks);
      }
    }
  }
  return { vocab, merges, tokenCount: nextId };
}

/** The tiny checkpoints' tokenizer.json and tokenizer_config.json, built deterministically from the piece list. */
export function tinyTokenizerFiles(options: TinyTokenizerOptions = {}): TinyTokenizerFiles {
  const {
    pieces = tinyVocabularyPieces,
    extraPieces = [],
    vocabMultiple = 64,
    modelMaxLength = 4096,
  } = options;
  if (!Number.isInteger(vocabMultiple) || vocabMultiple < 1) {
    throw new Error(`tiny tokenizer: vocabMultiple must be a positive integer, got ${vocabMultiple}`);
  }
  // A bytes-only tokenizer of the same format supplies the pre-tokenizer, so merges are derived on
  // exactly the pre-tokens that encoding will see.
  const byteVocab = Object.fromEntries(byteToChar.map((char, byte) => [char, byte]));
  const splitter = new Tokenizer(tokenizerJson(byteVocab, [], []), {}).pre_tokenizer;
  if (!splitter) throw new Error('tiny tokenizer: pre-tokenizer failed to build');
  const {
    vocab,
    merges,
    tokenCount: bpeCount,
  } = deriveMerges([...pieces, ...extraPieces], (text) => splitter.pre_tokenize(text));

  const added: AddedTokenJson[] = specialTokenTable.map((token, index) => ({
    id: bpeCount + index,
    content: token.content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: token.special,
  }));
  const ids = Object.fromEntries(
    specialTokenTable.map((token, index) => [token.key, bpeCount + index]),
  ) as Record<SpecialTokenKey, number>;
  const tokenCount = bpeCount + added.length;

  const tokenizerConfig: Record<string, unknown> = {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: Object.fromEntries(
      added.map(({ id, content, lstrip, normalized, rstrip, single_word, special }) => [
        String(id),
        { content, lstrip, normalized, rstrip, single_word, special },
      ]),
    ),
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: null,
    chat_template: tinyChatTemplate,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    model_max_length: modelMaxLength,
    pad_token: '<|endoftext|>',
    split_special_tokens: false,
    tokenizer_class: 'Qwen2Tokenizer',
    unk_token: null,
  };

  return {
    tokenizerJson: tokenizerJson(vocab, merges, added),
    tokenizerConfig,
    vocabSize: Math.ceil(tokenCount / vocabMultiple) * vocabMultiple,
    tokenCount,
    specialTokens: { ...ids, eos: ids.imEnd, pad: ids.endOfText },
    eosTokenIds: [ids.imEnd, ids.endOfText],
  };
}
