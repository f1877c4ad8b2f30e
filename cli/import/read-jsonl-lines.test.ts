// The import's line reader: lines split across chunks (a character cut in two included), CRLF, a
// last line without a newline, a line over the limit skipped to its end while the next is read, and a
// line that is not UTF-8 named with its offsets.
import { describe, expect, it } from 'vitest';
import { type JsonlLine, readJsonlLines } from './read-jsonl-lines.ts';

async function read(
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  max = 64,
): Promise<JsonlLine[]> {
  const lines: JsonlLine[] = [];
  for await (const line of readJsonlLines(chunks as AsyncIterable<Uint8Array>, max)) lines.push(line);
  return lines;
}

const utf8 = (text: string) => new TextEncoder().encode(text);

/** `bytes` in chunks of `size`, each in a fresh buffer. */
function* chunked(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.slice(at, at + size);
}

describe('readJsonlLines', () => {
  it('numbers the lines however the chunks cut them, multi-byte characters included', async () => {
    const text = 'a€b\r\n\n😀{"x":1}\nlast';
    const expected = [
      { line: 1, text: 'a€b' },
      { line: 2, text: '' },
      { line: 3, text: '😀{"x":1}' },
      { line: 4, text: 'last' },
    ];
    for (const size of [1, 2, 3, 5, 100])
      expect(await read(chunked(utf8(text), size)), `${size}`).toEqual(expected);
    expect(await read(chunked(utf8('one\n'), 2))).toEqual([{ line: 1, text: 'one' }]);
  });

  it('skips a line over the limit to its end, naming it, and reads on', async () => {
    // Limit 8: "12345678" fits exactly; nine bytes do not.
    const lines = await read(chunked(utf8('12345678\n123456789\nnext\n'), 4), 8);
    expect(lines).toEqual([
      { line: 1, text: '12345678' },
      { line: 2, problem: "longer than 8 bytes (the edge's ingest body limit)" },
      { line: 3, text: 'next' },
    ]);
  });

  it('does not keep a long line: 64 MiB of one line through a 1 KiB limit', async () => {
    const block = new Uint8Array(1024 * 1024).fill(0x78);
    async function* huge() {
      for (let i = 0; i < 64; i++) yield block; // the same buffer each time: nothing new is allocated here
      yield utf8('\nok');
    }
    const before = process.memoryUsage().arrayBuffers;
    const lines = await read(huge(), 1024);
    expect(lines).toEqual([
      { line: 1, problem: "longer than 1024 bytes (the edge's ingest body limit)" },
      { line: 2, text: 'ok' },
    ]);
    // Kept, it would be 64 MiB more; the reader holds at most the 1 KiB limit and a chunk's copy.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
  });

  it('names a line that is not UTF-8 with the bad byte’s offset in the line and in the file', async () => {
    const bytes = new Uint8Array([
      ...utf8('ok\n'),
      ...utf8('{"a":"caf'),
      0xe9,
      ...utf8('"}\n'),
      ...utf8('fine'),
    ]);
    expect(await read(chunked(bytes, 4))).toEqual([
      { line: 1, text: 'ok' },
      { line: 2, problem: 'invalid UTF-8 at byte 9 of the line (byte 12 of the file)' },
      { line: 3, text: 'fine' },
    ]);
  });
});
