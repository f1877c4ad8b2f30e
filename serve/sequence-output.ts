// One choice's output as tokens arrive: its ids and logprobs, its text (streamed as deltas), and the
// stop rules of vLLM's StopChecker (vllm/v1/engine/detokenizer.py and stop checking): a stop token
// (EOS unless `ignore_eos`, or one of `stop_token_ids`) ends the choice with its id kept in
// `token_ids` but not in the text; a stop string ends it with the text cut before the string (or
// after it with `include_stop_str_in_output`); `max_tokens` ends it with finish reason "length".
// Text that could be the start of a stop string is held back until it is known not to be one.
import { IncrementalDetokenizer } from './incremental-detokenizer.ts';
import type { SampledToken } from './row-sampler.ts';

export type FinishReason = 'stop' | 'length' | 'abort';

export interface StopRules {
  /** End of sequence ids; they stop the choice with `stop_reason` null. Empty with `ignore_eos`. */
  readonly eosTokenIds: readonly number[];
  /** `stop_token_ids`: they stop the choice with `stop_reason` = the id. */
  readonly stopTokenIds: readonly number[];
  readonly stopStrings: readonly string[];
  readonly includeStopStrInOutput: boolean;
  readonly maxTokens: number;
}

export interface AcceptResult {
  /** Text this token makes final (may be ''). */
  readonly delta: string;
  readonly finished: boolean;
}

export class SequenceOutput {
  readonly tokenIds: number[] = [];
  readonly samples: SampledToken[] = [];
  /** Text emitted so far. */
  text = '';
  finishReason: FinishReason | null = null;
  /** vLLM's `stop_reason`: the stop string or stop token id that ended the choice, else null. */
  stopReason: string | number | null = null;
  private readonly detokenizer: IncrementalDetokenizer;
  /** Decoded text not yet emitted (a possible stop-string start). */
  private held = '';
  private readonly longestStop: number;

  constructor(
    decode: (ids: readonly number[]) => string,
    private readonly rules: StopRules,
  ) {
    this.detokenizer = new IncrementalDetokenizer(decode);
    this.longestStop = Math.max(0, ...rules.stopStrings.map((stop) => stop.length));
  }

  get finished(): boolean {
    return this.finishReason !== null;
  }

  accept(sample: SampledToken): AcceptResult {
    if (this.finished) throw new Error('accept after the choice finished');
    const id = sample.tokenId;
    this.tokenIds.push(id);
    this.samples.push(sample);
    if (this.rules.eosTokenIds.includes(id) || this.rules.stopTokenIds.includes(id)) {
      const stopReason = this.rules.eosTokenIds.includes(id) ? null : id;
      return this.end('stop', stopReason, this.held + this.detokenizer.flush());
    }
    const before = this.text.length + this.held.length;
    const full = this.text + this.held + this.detokenizer.push(id);
    const stop = this.findStop(full, Math.max(0, before - this.longestStop + 1));
    if (stop) {
      const cut = stop.index + (this.rules.includeStopStrInOutput ? stop.stop.length : 0);
      return this.end('stop', stop.stop, full.slice(this.text.length, cut));
    }
    if (this.tokenIds.length >= this.rules.maxTokens) {
      return this.end('length', null, full.slice(this.text.length) + this.detokenizer.flush());
    }
    const keep = full.length - this.heldBackLength(full);
    const delta = full.slice(this.text.length, keep);
    this.text += delta;
    this.held = full.slice(keep);
    return { delta, finished: false };
  }

  /** Ends the choice from outside (client gone, context window full); returns the remaining text. */
  finish(reason: FinishReason): string {
    if (this.finished) return '';
    return this.end(reason, null, this.held + this.detokenizer.flush()).delta;
  }

  private end(reason: FinishReason, stopReason: string | number | null, delta: string): AcceptResult {
    this.finishReason = reason;
    this.stopReason = stopReason;
    this.text += delta;
    this.held = '';
    return { delta, finished: true };
  }

  private findStop(text: string, from: number): { index: number; stop: string } | undefined {
    let best: { index: number; stop: string } | undefined;
    for (const stop of this.rules.stopStrings) {
      const index = text.indexOf(stop, from);
      if (index !== -1 && (!best || index < best.index)) best = { index, stop };
    }
    return best;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of some stop string. */
  private heldBackLength(text: string): number {
    for (let length = Math.min(this.longestStop - 1, text.length); length > 0; length--) {
      const suffix = text.slice(text.length - length);
      if (this.rules.stopStrings.some((stop) => stop.startsWith(suffix))) return length;
    }
    return 0;
  }
}
