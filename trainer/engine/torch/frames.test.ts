// The torch engine's frames: what is encoded reads back exactly, split across chunks at any byte, with
// every tensor at an 8-byte-aligned offset; a shape that does not match its data is refused.
import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameError, FrameReader } from './frames.ts';

describe('frames', () => {
  const tensors = {
    ids: { dtype: 'int32', shape: [5], data: Int32Array.of(1, -2, 3, 2 ** 31 - 1, 0) },
    flags: { dtype: 'uint8', shape: [3], data: Uint8Array.of(1, 0, 255) },
    logprobs: { dtype: 'float32', shape: [2, 2], data: Float32Array.of(-0.5, Number.NaN, -1e-30, 3.25) },
  } as const;

  it('reads back header and tensors, whatever the chunking', () => {
    const bytes = encodeFrame({ id: 3, op: 'step', args: { text: 'π ✓' } }, tensors);
    const offsets = JSON.parse(bytes.subarray(8, 8 + bytes.readUInt32LE(0)).toString()).tensors;
    for (const entry of Object.values(offsets) as { offset: number }[]) expect(entry.offset % 8).toBe(0);
    for (const cut of [1, 7, 8, 9, 30, bytes.length - 1]) {
      const reader = new FrameReader();
      const frames = [...reader.push(bytes.subarray(0, cut)), ...reader.push(bytes.subarray(cut))];
      expect(frames).toHaveLength(1);
      const [frame] = frames;
      expect(frame?.header).toMatchObject({ id: 3, op: 'step', args: { text: 'π ✓' } });
      expect(Array.from(frame?.tensors.ids?.data ?? [])).toEqual(Array.from(tensors.ids.data));
      expect(Array.from(frame?.tensors.flags?.data ?? [])).toEqual([1, 0, 255]);
      expect(frame?.tensors.logprobs?.shape).toEqual([2, 2]);
      expect(Array.from(frame?.tensors.logprobs?.data ?? [])).toEqual(Array.from(tensors.logprobs.data));
    }
  });

  it('hands back two frames that arrive in one chunk', () => {
    const reader = new FrameReader();
    const both = Buffer.concat([encodeFrame({ id: 1 }), encodeFrame({ id: 2 }, tensors)]);
    expect(reader.push(both).map((frame) => frame.header.id)).toEqual([1, 2]);
  });

  it('refuses a shape that does not match the data', () => {
    expect(() =>
      encodeFrame({ id: 1 }, { ids: { dtype: 'int32', shape: [4], data: Int32Array.of(1, 2) } }),
    ).toThrow(FrameError);
  });
});
