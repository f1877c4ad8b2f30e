// Strict UTF-8: the offsets of hand-made malformed sequences (Unicode Table 3-7's boundaries), and
// agreement with TextDecoder's fatal mode on every two-byte sequence.
import { describe, expect, it } from 'vitest';
import { decodeUtf8, invalidUtf8Offset, Utf8Error } from './decode-utf8.ts';

const bytes = (...values: number[]) => new Uint8Array(values);

describe('decodeUtf8', () => {
  it('decodes valid text, multi-byte characters and a lone-surrogate JSON escape as they are', () => {
    const text = 'a é € 😀 "\\ud800"';
    expect(decodeUtf8(new TextEncoder().encode(text))).toBe(text);
  });

  it('refuses a malformed byte with the offset of the sequence it starts', () => {
    const cases: [Uint8Array, number][] = [
      [bytes(0x61, 0xff), 1], // 0xFF is never UTF-8
      [bytes(0x61, 0x62, 0x80), 2], // a continuation byte with no lead
      [bytes(0x7b, 0xc3), 1], // cut off: a lead byte at the end
      [bytes(0x61, 0xc3, 0x41), 1], // a lead byte followed by ASCII
      [bytes(0xc0, 0xaf), 0], // overlong "/"
      [bytes(0x61, 0xe0, 0x80, 0xaf), 1], // overlong three-byte form
      [bytes(0x61, 0x61, 0xed, 0xa0, 0x80), 2], // an encoded surrogate (U+D800): not UTF-8
      [bytes(0xf4, 0x90, 0x80, 0x80), 0], // beyond U+10FFFF
      [bytes(0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98), 3], // € then a cut-off emoji
    ];
    for (const [input, offset] of cases) {
      expect(invalidUtf8Offset(input), Array.from(input).join(',')).toBe(offset);
      expect(() => decodeUtf8(input)).toThrow(new Utf8Error(offset));
      expect(() => decodeUtf8(input)).toThrow(`invalid UTF-8 at byte ${offset}`);
    }
  });

  it('agrees with TextDecoder’s fatal mode on every sequence of two bytes', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true });
    const disagreements: string[] = [];
    for (let first = 0; first < 256; first++) {
      for (let second = 0; second < 256; second++) {
        const input = bytes(first, second);
        let valid = true;
        try {
          fatal.decode(input);
        } catch {
          valid = false;
        }
        if ((invalidUtf8Offset(input) === undefined) !== valid) disagreements.push(`${first},${second}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});
