// Stop rules and streamed text on a byte-level toy vocabulary (id b < 256 is byte b, as in byte-level
// BPE; 300 is EOS, 301 a stop token id), decoded with TextDecoder like the real ByteLevel decoder.
import { describe, expect, it } from 'vitest';
import type { SampledToken } from './row-sampler.ts';
import { SequenceOutput, type StopRules } from './sequence-output.ts';

const decoder = new TextDecoder();
const decode = (ids: readonly number[]) => decoder.decode(new Uint8Array(ids.filter((id) => id < 256)));
const bytes = (text: string) => Array.from(new TextEncoder().encode(text));
const token = (tokenId: number): SampledToken => ({ tokenId, logprob: -1, top: [] });

const rules: StopRules = {
  eosTokenIds: [300],
  stopTokenIds: [301],
  stopStrings: [],
  includeStopStrInOutput: false,
  maxTokens: 100,
};

function feed(output: SequenceOutput, ids: readonly number[]): string[] {
  const deltas: string[] = [];
  for (const id of ids) {
    if (output.finished) break;
    deltas.push(output.accept(token(id)).delta);
  }
  return deltas;
}

describe('SequenceOutput', () => {
  it('cuts at a stop string spread over tokens and never streams any part of it', () => {
    const output = new SequenceOutput(decode, { ...rules, stopStrings: ['END', 'xyz'] });
    const deltas = feed(output, [...bytes('Hello EN'), ...bytes('D world')]);
    expect(output.text).toBe('Hello ');
    expect(deltas.join('')).toBe('Hello ');
    expect(deltas.some((delta) => delta.includes('E'))).toBe(false);
    expect(output).toMatchObject({ finishReason: 'stop', stopReason: 'END' });
    // The token that completed "END" is the last one kept: 'H','e','l','l','o',' ','E','N','D'.
    expect(output.tokenIds).toHaveLength(9);
  });

  it('keeps the stop string with include_stop_str_in_output, and releases a false alarm', () => {
    const kept = new SequenceOutput(decode, { ...rules, stopStrings: ['END'], includeStopStrInOutput: true });
    feed(kept, bytes('a END b'));
    expect(kept.text).toBe('a END');
    const alarm = new SequenceOutput(decode, { ...rules, stopStrings: ['END'] });
    const deltas = feed(alarm, bytes('EN!'));
    expect(deltas).toEqual(['', '', 'EN!']);
    expect(alarm.finished).toBe(false);
  });

  it('ends on EOS (stop_reason null) and stop_token_ids (stop_reason = id), ids kept, text not', () => {
    const eos = new SequenceOutput(decode, rules);
    feed(eos, [...bytes('ok'), 300, 65]);
    expect(eos).toMatchObject({
      text: 'ok',
      finishReason: 'stop',
      stopReason: null,
      tokenIds: [111, 107, 300],
    });
    const stop = new SequenceOutput(decode, rules);
    feed(stop, [...bytes('ok'), 301]);
    expect(stop).toMatchObject({ text: 'ok', finishReason: 'stop', stopReason: 301 });
    expect(() => stop.accept(token(65))).toThrow(/after the choice finished/);
  });

  it('ends with "length" at max_tokens and holds a split UTF-8 character until it is whole', () => {
    const output = new SequenceOutput(decode, { ...rules, maxTokens: 3 });
    const deltas = feed(output, [...bytes('é'), ...bytes('xy')]); // é is C3 A9
    expect(deltas).toEqual(['', 'é', 'x']);
    expect(output).toMatchObject({ text: 'éx', finishReason: 'length' });
  });

  it('flushes held text when ended from outside', () => {
    const output = new SequenceOutput(decode, { ...rules, stopStrings: ['STOP'] });
    expect(feed(output, bytes('go ST'))).toEqual(['g', 'o', ' ', '', '']);
    expect(output.finish('abort')).toBe('ST');
    expect(output).toMatchObject({ text: 'go ST', finishReason: 'abort', stopReason: null });
    expect(output.finish('length')).toBe('');
  });
});
