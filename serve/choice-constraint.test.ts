// Guided choice on a toy vocabulary: ids 0–255 are bytes, 256 = "ab", 257 = "abc", 258 = "<x>"
// (an added token), 259 is EOS (no text), 260 an id the tokenizer does not know.
import { describe, expect, it } from 'vitest';
import { choiceConstraint } from './choice-constraint.ts';

const encoder = new TextEncoder();
const table = [
  ...Array.from({ length: 256 }, (_, b) => new Uint8Array([b])),
  encoder.encode('ab'),
  encoder.encode('abc'),
  encoder.encode('<x>'),
  new Uint8Array(0),
  new Uint8Array(0),
];
const code = (char: string) => char.charCodeAt(0);
const eos = 259;

describe('choiceConstraint', () => {
  it('allows every tokenization of a choice prefix, then only the stop tokens', () => {
    const constraint = choiceConstraint(['abc', 'abd'], table, [eos]);
    expect(constraint.allowed([])).toEqual([code('a'), 256, 257]);
    expect(constraint.allowed([256])).toEqual([code('c'), code('d')]);
    expect(constraint.allowed([code('a')])).toEqual([code('b')]);
    expect(constraint.allowed([257])).toEqual([eos]);
    expect(constraint.allowed([code('a'), code('b'), code('d')])).toEqual([eos]);
  });

  it('allows stopping or going on where one choice extends another, and added tokens by their text', () => {
    const constraint = choiceConstraint(['a', 'ab<x>'], table, [eos]);
    expect(constraint.allowed([code('a')])).toEqual([code('b'), eos]);
    expect(constraint.allowed([256])).toEqual([code('<'), 258]);
  });

  it('allows nothing after a complete choice when there is no stop token', () => {
    const constraint = choiceConstraint(['ab'], table, []);
    expect(constraint.allowed([256])).toEqual([]);
  });
});
