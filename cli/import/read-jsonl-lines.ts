// The lines of a JSONL byte stream for `edgerl import`, numbered from 1, each decoded as strict UTF-8,
// and none held in memory beyond `maxLineBytes`: a longer line is skipped to its end and reported by
// number, as is a line that is not UTF-8 (with the offset of its bad byte), so one bad line never
// stops the import or grows its memory. Splitting the raw bytes on `\n` is safe: 0x0A never occurs
// inside a multi-byte UTF-8 sequence. A `\r` before the `\n` is dropped (CRLF files).
import { decodeUtf8, Utf8Error } from '../../protocol/decode-utf8.ts';

export type JsonlLine =
  | { readonly line: number; readonly text: string }
  | { readonly line: number; readonly problem: string };

const newline = 0x0a;
const carriageReturn = 0x0d;

export async function* readJsonlLines(
  chunks: AsyncIterable<Uint8Array>,
  maxLineBytes: number,
): AsyncGenerator<JsonlLine> {
  let parts: Uint8Array[] = [];
  let size = 0;
  /** True once the current line passed the limit: its bytes are counted, not kept. */
  let tooLong = false;
  let line = 1;
  /** Byte offset in the stream of the current line's first byte. */
  let lineStart = 0;
  /** `copy`: the segment outlives its chunk (a stream may reuse its buffer), so a kept one is copied. */
  const take = (segment: Uint8Array, copy: boolean) => {
    size += segment.byteLength;
    if (tooLong) return;
    if (size > maxLineBytes) {
      tooLong = true;
      parts = [];
    } else if (segment.byteLength > 0) parts.push(copy ? segment.slice() : segment);
  };
  const end = (): JsonlLine => {
    const ended: JsonlLine = tooLong
      ? { line, problem: `longer than ${maxLineBytes} bytes (the edge's ingest body limit)` }
      : decodeLine(line, lineStart, parts);
    line += 1;
    parts = [];
    size = 0;
    tooLong = false;
    return ended;
  };
  let offset = 0;
  for await (const chunk of chunks) {
    let from = 0;
    for (;;) {
      const at = chunk.indexOf(newline, from);
      if (at < 0) break;
      take(chunk.subarray(from, at), false);
      const ended = end();
      lineStart = offset + at + 1;
      yield ended;
      from = at + 1;
    }
    // The rest of the chunk starts the next line.
    take(chunk.subarray(from), true);
    offset += chunk.byteLength;
  }
  if (size > 0 || tooLong) yield end();
}

function decodeLine(line: number, lineStart: number, parts: readonly Uint8Array[]): JsonlLine {
  const bytes = concat(parts);
  const length = bytes.at(-1) === carriageReturn ? bytes.byteLength - 1 : bytes.byteLength;
  try {
    return { line, text: decodeUtf8(bytes.subarray(0, length)) };
  } catch (error) {
    if (!(error instanceof Utf8Error)) throw error;
    return {
      line,
      problem: `invalid UTF-8 at byte ${error.offset} of the line (byte ${lineStart + error.offset} of the file)`,
    };
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  return bytes;
}
