// Incremental detokenization against decoding everything at once, for a byte-level decoder and for a
// SentencePiece-like one whose first piece loses its leading space (where one-by-one decoding fails).
import { describe, expect, it } from 'vitest';
import { IncrementalDetokenizer } from './incremental-detokenizer.ts';

const decoder = new TextDecoder();
const byteLevel = (ids: readonly number[]) => decoder.decode(new Uint8Array(ids));

const pieces = ['▁Hello', '▁wor', 'ld', '!', '▁é'];
/** SentencePiece's Metaspace decoding: ▁ → space, and the leading space of the text dropped. */
const sentencePiece = (ids: readonly number[]) =>
  ids
    .map((id) => pieces[id] ?? '')
    .join('')
    .replaceAll('▁', ' ')
    .replace(/^ /, '');

describe('IncrementalDetokenizer', () => {
  it('adds up to the full decode for byte-level text with split characters', () => {
    const ids = Array.from(new TextEncoder().encode('naïve 🙂 café'));
    const detokenizer = new IncrementalDetokenizer(byteLevel);
    const deltas = ids.map((id) => detokenizer.push(id));
    expect(deltas.join('') + detokenizer.flush()).toBe('naïve 🙂 café');
    expect(deltas.some((delta) => delta.includes('\uFFFD'))).toBe(false);
    // The four bytes of 🙂 produce nothing until the last one.
    const emoji = ids.indexOf(0xf0);
    expect(deltas.slice(emoji, emoji + 4)).toEqual(['', '', '', '🙂']);
  });

  it('keeps the spaces a windowed SentencePiece decode gives', () => {
    const detokenizer = new IncrementalDetokenizer(sentencePiece);
    const deltas = [0, 1, 2, 3, 4].map((id) => detokenizer.push(id));
    expect(deltas).toEqual(['Hello', ' wor', 'ld', '!', ' é']);
    expect(deltas.join('')).toBe(sentencePiece([0, 1, 2, 3, 4]));
  });

  it('flushes an unfinished character as U+FFFD', () => {
    const detokenizer = new IncrementalDetokenizer(byteLevel);
    expect(detokenizer.push(0x41)).toBe('A');
    expect(detokenizer.push(0xc3)).toBe('');
    expect(detokenizer.flush()).toBe('\uFFFD');
  });
});
