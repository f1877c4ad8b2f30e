import { describe, expect, it } from 'vitest';
import {
  escapeText,
  escapeValue,
  needsEscaping,
  StoredTextError,
  storableMessage,
  unescapeText,
  unescapeValue,
} from './stored-text.ts';

describe('escapeText / unescapeText', () => {
  it('spells NUL, lone surrogates and the backslash, and nothing else', () => {
    expect(escapeText('a\u0000b')).toBe('a\\u0000b');
    expect(escapeText('\uD800x\uDFFF')).toBe('\\ud800x\\udfff');
    expect(escapeText('C:\\dir')).toBe('C:\\\\dir');
    // A well-formed pair (an emoji) and other controls stay as they are.
    expect(escapeText('😀\t\n')).toBe('😀\t\n');
  });

  it('round-trips text that already looks escaped (the escape character is escaped too)', () => {
    for (const text of ['\\u0000', '\\\\u0000\u0000', '\\', 'a\uDBFF\u0000\\ud800', '', '\uDC00\uD800']) {
      expect(unescapeText(escapeText(text))).toBe(text);
    }
    expect(escapeText('\\u0000')).not.toBe(escapeText('\u0000'));
  });

  it('refuses a backslash the escaped form never writes', () => {
    expect(() => unescapeText('a\\nb')).toThrow(StoredTextError);
    expect(() => unescapeText('a\\')).toThrow(StoredTextError);
    expect(() => unescapeText('\\u00G0')).toThrow(StoredTextError);
  });
});

describe('values', () => {
  const value = { 'k\u0000': ['\uD800', { inner: 'x\\y' }], n: 1, none: null };

  it('finds unstorable text in keys and values at any depth', () => {
    expect(needsEscaping(value)).toBe(true);
    expect(needsEscaping({ a: ['ok', { b: 'fine\\' }], c: 2 })).toBe(false);
    expect(needsEscaping(null)).toBe(false);
  });

  it('escapes every string and key, and unescapes back to the original', () => {
    const escaped = escapeValue(value);
    expect(escaped).toEqual({ 'k\\u0000': ['\\ud800', { inner: 'x\\\\y' }], n: 1, none: null });
    expect(needsEscaping(escaped)).toBe(false);
    expect(unescapeValue(escaped)).toEqual(value);
  });
});

describe('storableMessage', () => {
  it('spells out what Postgres cannot hold and leaves backslashes alone', () => {
    expect(storableMessage('bad \u0000 \\ \uD800')).toBe('bad \\u0000 \\ \\ud800');
    expect(needsEscaping(storableMessage('\u0000\uDFFF'))).toBe(false);
  });
});
