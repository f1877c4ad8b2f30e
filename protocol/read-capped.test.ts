import { describe, expect, it } from 'vitest';
import { readCapped } from './read-capped.ts';

/** A body of `chunks` chunks of 1 KiB; records whether the reader cancelled it and how many were pulled. */
function body(chunks: number) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled === chunks) return controller.close();
      seen.pulled += 1;
      controller.enqueue(new Uint8Array(1024).fill(65));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe('readCapped', () => {
  it('returns the whole body at or under the cap', async () => {
    const { stream } = body(4);
    const read = await readCapped(stream, 4096);
    expect(read.ok && read.bytes.byteLength).toBe(4096);
  });

  it('stops past the cap and cancels the body, having pulled only one chunk beyond it', async () => {
    const { stream, seen } = body(1_000_000);
    const read = await readCapped(stream, 4096);
    expect(read).toEqual({ ok: false, bytesRead: 5120, maxBytes: 4096 });
    expect(seen.cancelled).toBe(true);
    // 5 read + at most the stream's one-chunk read-ahead (highWaterMark 1).
    expect(seen.pulled).toBeLessThanOrEqual(6);
  });

  it('reads a missing body as empty', async () => {
    expect(await readCapped(null, 10)).toEqual({ ok: true, bytes: new Uint8Array(0) });
  });
});
