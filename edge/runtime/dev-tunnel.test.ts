import { describe, expect, it } from 'vitest';
import { terminateWatcher } from './dev-tunnel.ts';

/** A typed message: type byte, int32 length (counting itself), payload. */
function typed(type: string, payload: number[] = []): number[] {
  const length = 4 + payload.length;
  return [
    type.charCodeAt(0),
    length >>> 24,
    (length >>> 16) & 255,
    (length >>> 8) & 255,
    length & 255,
    ...payload,
  ];
}
/** An untyped start-up packet: int32 length, int32 code, rest. */
function untyped(code: number, rest: number[] = []): number[] {
  const length = 8 + rest.length;
  const bytes = [length >>> 24, (length >>> 16) & 255, (length >>> 8) & 255, length & 255];
  return [...bytes, code >>> 24, (code >>> 16) & 255, (code >>> 8) & 255, code & 255, ...rest];
}

describe('terminateWatcher', () => {
  it('spots Terminate after SSLRequest, StartupMessage and queries, across chunk boundaries', () => {
    const stream = [
      ...untyped(80877103), // SSLRequest
      ...untyped(196608, [117, 0, 0]), // StartupMessage, protocol 3.0
      ...typed('Q', [...'select 1'].map((c) => c.charCodeAt(0)).concat(0)),
      ...typed('X'),
    ];
    for (const cut of [1, 3, 7, 13, stream.length - 2]) {
      const watch = terminateWatcher();
      expect(watch(new Uint8Array(stream.slice(0, cut)))).toBe(false);
      expect(watch(new Uint8Array(stream.slice(cut)))).toBe(true);
    }
  });

  it('does not mistake an X inside a payload or in the start-up packet for Terminate', () => {
    const watch = terminateWatcher();
    // 'X' = 0x58 = 88 appears in the start-up payload and inside a query's text.
    expect(watch(new Uint8Array(untyped(196608, [88, 0, 0])))).toBe(false);
    expect(watch(new Uint8Array(typed('Q', [88, 88, 0])))).toBe(false);
    expect(watch(new Uint8Array(typed('X')))).toBe(true);
  });
});
