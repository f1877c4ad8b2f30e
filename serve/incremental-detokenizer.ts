// Turns a growing list of token ids into text deltas. Decodes a short window of recent ids and emits
// what the newest ids add to it, and holds text back while it ends in U+FFFD (a UTF-8 character
// split across tokens): the prefix/read-offset scheme of Hugging Face TGI and vLLM
// (vllm/transformers_utils/detokenizer_utils.py, `detokenize_incrementally`). Windowed decoding keeps
// each step O(window) and stays right for tokenizers whose decoder looks at neighbours (SentencePiece's
// leading-space rule), where decoding tokens one by one would not.

export type Detokenize = (ids: readonly number[]) => string;

export class IncrementalDetokenizer {
  private readonly ids: number[] = [];
  private prefixOffset = 0;
  private readOffset = 0;

  constructor(private readonly decode: Detokenize) {}

  /** Appends one id and returns the text it completes ('' while a character is still split). */
  push(id: number): string {
    this.ids.push(id);
    const before = this.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const after = this.decode(this.ids.slice(this.prefixOffset));
    if (after.length > before.length && !after.endsWith('\uFFFD')) {
      this.prefixOffset = this.readOffset;
      this.readOffset = this.ids.length;
      return after.slice(before.length);
    }
    return '';
  }

  /** Text of ids not yet emitted (a trailing split character decodes as U+FFFD, as vLLM returns it). */
  flush(): string {
    const before = this.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const after = this.decode(this.ids.slice(this.prefixOffset));
    this.prefixOffset = this.readOffset;
    this.readOffset = this.ids.length;
    return after.length > before.length ? after.slice(before.length) : '';
  }
}
