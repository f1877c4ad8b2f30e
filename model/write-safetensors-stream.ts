// Writes a safetensors file without holding it in memory: the header first, then each tensor's values,
// produced chunk by chunk by a callback, converted to the file's dtype and written at their offsets
// while the next chunk is produced (two buffers). The bytes equal encodeSafetensors' for the same
// tensors. For checkpoints too large to build in memory (`model init`'s 0.5B–7B presets). Leaves out
// reading and sharding (write-model-dir.ts splits tensors into files).
import { open } from 'node:fs/promises';
import { f32ToBf16, f32ToF16 } from './half-precision.ts';
import { encodeSafetensorsHeader, type SafetensorsDtype, safetensorsDtypeBytes } from './safetensors.ts';

/**
 * Writes the values of tensor `name` from flat (row-major) index `start` on into `target`. Called
 * for the tensors in the order given and, within one, for consecutive chunks in order.
 */
export type FillTensor = (name: string, start: number, target: Float32Array) => void;

/** Values per chunk: 4 Mi float32 values (16 MiB) per buffer, two buffers. */
const defaultChunkElements = 1 << 22;

/** Writes `path` and returns its size in bytes. */
export async function writeSafetensorsStream(
  path: string,
  shapes: ReadonlyMap<string, readonly number[]>,
  dtype: SafetensorsDtype,
  fill: FillTensor,
  options: { chunkElements?: number; metadata?: Record<string, string> } = {},
): Promise<number> {
  const chunkElements = options.chunkElements ?? defaultChunkElements;
  const { header, dataBytes } = encodeSafetensorsHeader(shapes, dtype, options.metadata);
  const elementBytes = safetensorsDtypeBytes(dtype);
  const buffers = [0, 1].map(() => ({
    values: new Float32Array(chunkElements),
    half: dtype === 'F32' ? null : new Uint16Array(chunkElements),
    pending: Promise.resolve(),
  }));
  const file = await open(path, 'w');
  try {
    await writeAt(file, header, 0);
    let position = header.byteLength;
    let turn = 0;
    for (const [name, shape] of shapes) {
      const count = shape.reduce((a, b) => a * b, 1);
      for (let start = 0; start < count; start += chunkElements) {
        const buffer = buffers[turn++ % 2] as (typeof buffers)[number];
        await buffer.pending; // its previous chunk is on disk, so it may be refilled
        const values = buffer.values.subarray(0, Math.min(chunkElements, count - start));
        fill(name, start, values);
        const bytes = encodeChunk(values, dtype, buffer.half);
        buffer.pending = writeAt(file, bytes, position);
        position += values.length * elementBytes;
      }
    }
    await Promise.all(buffers.map((buffer) => buffer.pending));
    if (position !== header.byteLength + dataBytes) throw new Error(`${path}: wrote ${position} bytes`);
    return position;
  } finally {
    await Promise.allSettled(buffers.map((buffer) => buffer.pending));
    await file.close();
  }
}

function encodeChunk(values: Float32Array, dtype: SafetensorsDtype, half: Uint16Array | null): Uint8Array {
  switch (dtype) {
    case 'F32':
      return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    case 'BF16':
      return bytesOf(f32ToBf16(values, half as Uint16Array), values.length);
    case 'F16':
      return bytesOf(f32ToF16(values, half as Uint16Array), values.length);
  }
}

function bytesOf(bits: Uint16Array, count: number): Uint8Array {
  return new Uint8Array(bits.buffer, bits.byteOffset, count * 2);
}

/** Writes all of `bytes` at `position` (explicit, so two writes in flight cannot reorder). */
async function writeAt(
  file: Awaited<ReturnType<typeof open>>,
  bytes: Uint8Array,
  position: number,
): Promise<void> {
  let done = 0;
  while (done < bytes.byteLength) {
    const { bytesWritten } = await file.write(bytes, done, bytes.byteLength - done, position + done);
    done += bytesWritten;
  }
}
