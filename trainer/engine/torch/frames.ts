// The torch engine's wire frames (docs/torch-engine.md, "Frames"): u32 header length, u32 payload
// length (little-endian), a UTF-8 JSON header, then raw tensor bytes, each tensor at an 8-byte-aligned
// offset named in the header. Pure: bytes in, values out. Leaves out the process and the operations.

export type WireDtype = 'int32' | 'float32' | 'uint8';

export type WireArray = Int32Array | Float32Array | Uint8Array;

export interface WireTensor {
  readonly dtype: WireDtype;
  readonly shape: readonly number[];
  readonly data: WireArray;
}

interface TensorEntry {
  readonly dtype: WireDtype;
  readonly shape: readonly number[];
  readonly offset: number;
}

export interface Frame {
  readonly header: Record<string, unknown>;
  readonly tensors: Readonly<Record<string, WireTensor>>;
}

const prefixBytes = 8;
/** A header or payload larger than this is a broken stream, not a frame. */
export const maxFrameBytes = 0xffff_fff0;

const bytesPer: Record<WireDtype, number> = { int32: 4, float32: 4, uint8: 1 };

export class FrameError extends Error {
  override readonly name = 'FrameError';
  readonly code = 'engine-bad-frame';
}

/** One frame: `header` (its `tensors` field is written here) and the tensors' bytes. */
export function encodeFrame(
  header: Record<string, unknown>,
  tensors: Readonly<Record<string, WireTensor>> = {},
): Buffer {
  const entries: Record<string, TensorEntry> = {};
  let size = 0;
  for (const [name, tensor] of Object.entries(tensors)) {
    const count = tensor.shape.reduce((a, b) => a * b, 1);
    if (count !== tensor.data.length) {
      throw new FrameError(
        `tensor ${name}: shape [${tensor.shape}] holds ${count} values, data has ${tensor.data.length}`,
      );
    }
    entries[name] = { dtype: tensor.dtype, shape: tensor.shape, offset: size };
    size = align(size + tensor.data.byteLength);
  }
  const json = Buffer.from(JSON.stringify({ ...header, tensors: entries }), 'utf8');
  if (json.length > maxFrameBytes || size > maxFrameBytes)
    throw new FrameError(`a frame of ${size} payload bytes is too large`);
  const out = Buffer.alloc(prefixBytes + json.length + size);
  out.writeUInt32LE(json.length, 0);
  out.writeUInt32LE(size, 4);
  json.copy(out, prefixBytes);
  for (const [name, tensor] of Object.entries(tensors)) {
    const entry = entries[name] as TensorEntry;
    const bytes = new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
    out.set(bytes, prefixBytes + json.length + entry.offset);
  }
  return out;
}

/** Collects stream chunks and hands back each complete frame. */
export class FrameReader {
  #buffered: Buffer[] = [];
  #length = 0;

  /** Adds `chunk`; returns the frames it completed, in order. */
  push(chunk: Buffer): Frame[] {
    this.#buffered.push(chunk);
    this.#length += chunk.length;
    const frames: Frame[] = [];
    for (;;) {
      if (this.#length < prefixBytes) return frames;
      const head = this.#peek(prefixBytes);
      const headerBytes = head.readUInt32LE(0);
      const payloadBytes = head.readUInt32LE(4);
      const total = prefixBytes + headerBytes + payloadBytes;
      if (this.#length < total) return frames;
      const whole = this.#take(total);
      frames.push(decodeFrame(whole, headerBytes, payloadBytes));
    }
  }

  #peek(count: number): Buffer {
    if ((this.#buffered[0]?.length ?? 0) < count) this.#buffered = [Buffer.concat(this.#buffered)];
    return this.#buffered[0] as Buffer;
  }

  #take(count: number): Buffer {
    const all = this.#buffered.length === 1 ? (this.#buffered[0] as Buffer) : Buffer.concat(this.#buffered);
    this.#buffered = all.length > count ? [all.subarray(count)] : [];
    this.#length -= count;
    return all.subarray(0, count);
  }
}

function decodeFrame(whole: Buffer, headerBytes: number, payloadBytes: number): Frame {
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(whole.subarray(prefixBytes, prefixBytes + headerBytes).toString('utf8')) as Record<
      string,
      unknown
    >;
  } catch (error) {
    throw new FrameError(`a frame header is not JSON: ${(error as Error).message}`);
  }
  const payload = whole.subarray(prefixBytes + headerBytes);
  const tensors: Record<string, WireTensor> = {};
  const entries = (header.tensors ?? {}) as Record<string, TensorEntry>;
  for (const [name, entry] of Object.entries(entries)) {
    const width = bytesPer[entry.dtype];
    if (!width) throw new FrameError(`tensor ${name}: unknown dtype ${String(entry.dtype)}`);
    const count = entry.shape.reduce((a, b) => a * b, 1);
    const end = entry.offset + count * width;
    if (!(entry.offset >= 0 && end <= payloadBytes)) {
      throw new FrameError(
        `tensor ${name}: bytes ${entry.offset}..${end} lie outside the payload of ${payloadBytes}`,
      );
    }
    // A copy: the typed array needs its own aligned buffer, and the stream's chunks are reused.
    const bytes = new Uint8Array(payload.subarray(entry.offset, end));
    const data =
      entry.dtype === 'int32'
        ? new Int32Array(bytes.buffer, 0, count)
        : entry.dtype === 'float32'
          ? new Float32Array(bytes.buffer, 0, count)
          : bytes;
    tensors[name] = { dtype: entry.dtype, shape: entry.shape, data };
  }
  return { header, tensors };
}

function align(offset: number): number {
  return Math.ceil(offset / 8) * 8;
}
