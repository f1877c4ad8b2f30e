import { describe, expect, it } from 'vitest';
import { decodeArguments } from './execute-tool-call.ts';

describe('decodeArguments', () => {
  it('decodes a JSON object, treats empty text as no arguments, and names what is wrong otherwise', () => {
    expect(decodeArguments('{"key":"ab"}')).toEqual({ ok: true, value: { key: 'ab' } });
    expect(decodeArguments('  ')).toEqual({ ok: true, value: {} });
    expect(decodeArguments('{"key": "ab"')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^arguments are not valid JSON/),
    });
    expect(decodeArguments('"ab"')).toEqual({
      ok: false,
      message: 'arguments must be a JSON object, got string',
    });
    expect(decodeArguments('null')).toEqual({
      ok: false,
      message: 'arguments must be a JSON object, got object',
    });
  });
});
