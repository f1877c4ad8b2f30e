// The safetensors format (huggingface/safetensors, docs "Format"): an 8-byte little-endian header
// length N, N bytes of JSON `{ name: { dtype, shape, data_offsets: [begin, end] }, __metadata__ }`,
// then the raw little-endian tensor bytes. Reads and writes F32, F16 and BF16 as float32 arrays in
// memory; leaves out integer and 8-bit float dtypes (no model tensor we load uses them).
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from './half-precision.ts';
import { errorMessage } from '../protocol/error-message.ts';

export type SafetensorsDtype = 'F32' | 'F16' | 'BF16';

/** A tensor held on the host: row-major float32 values and their shape. */
export interface HostTensor {
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

export interface SafetensorsEntry {
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  /** Byte range relative to the start of the data section. */
  readonly begin: number;
  readonly end: number;
}

export interface SafetensorsHeader {
  readonly entries: ReadonlyMap<string, SafetensorsEntry>;
  readonly metadata: Readonly<Record<string, string>>;
  /** File offset of the data section: 8 + header length. */
  readonly dataStart: number;
}

const dtypeBytes = { F32: 4, F16: 2, BF16: 2 } satisfies Record<SafetensorsDtype, number>;

/** Upper bound on the JSON header; the reference implementation refuses headers over 100 MB. */
const maxHeaderBytes = 100_000_000;

/** Error in a safetensors file; `source` names the file (or "buffer") so the message points at it. */
export class SafetensorsError extends Error {
  override readonly name = 'SafetensorsError';
  readonly code = 'invalid-safetensors';
}

/** Reads the header from the first bytes of a file (at least 8 + N of them). */
export function parseSafetensorsHeader(prefix: Uint8Array, source = 'buffer'): SafetensorsHeader {
  if (prefix.byteLength < 8) throw new SafetensorsError(`${source}: shorter than the 8-byte header length`);
  const headerLength = Number(new DataView(prefix.buffer, prefix.byteOffset, 8).getBigUint64(0, true));
  if (headerLength > maxHeaderBytes) {
    throw new SafetensorsError(`${source}: header length ${headerLength} is over ${maxHeaderBytes} bytes`);
  }
  if (prefix.byteLength < 8 + headerLength) {
    throw new SafetensorsError(`${source}: header says ${headerLength} bytes but the file is shorter`);
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(prefix.subarray(8, 8 + headerLength)));
  } catch (error) {
    throw new SafetensorsError(`${source}: header is not JSON (${errorMessage(error)})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new SafetensorsError(`${source}: header is not a JSON object`);
  }
  const entries = new Map<string, SafetensorsEntry>();
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(json)) {
    if (name === '__metadata__') {
      metadata = raw as Record<string, string>;
      continue;
    }
    entries.set(name, parseEntry(name, raw, source));
  }
  return { entries, metadata, dataStart: 8 + headerLength };
}

function parseEntry(name: string, raw: unknown, source: string): SafetensorsEntry {
  const entry = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
  const dtype = entry?.dtype;
  if (dtype !== 'F32' && dtype !== 'F16' && dtype !== 'BF16') {
    throw new SafetensorsError(
      `${source}: tensor "${name}" has dtype ${JSON.stringify(dtype)}; supported: F32, F16, BF16`,
    );
  }
  const shape = entry.shape;
  const offsets = entry.data_offsets;
  const isCount = (n: unknown) => Number.isInteger(n) && (n as number) >= 0;
  if (!Array.isArray(shape) || !shape.every(isCount)) {
    throw new SafetensorsError(`${source}: tensor "${name}" has an invalid shape ${JSON.stringify(shape)}`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount) || offsets[0] > offsets[1]) {
    throw new SafetensorsError(
      `${source}: tensor "${name}" has invalid data_offsets ${JSON.stringify(offsets)}`,
    );
  }
  const expected = shape.reduce((a: number, b: number) => a * b, 1) * dtypeBytes[dtype];
  if (offsets[1] - offsets[0] !== expected) {
    throw new SafetensorsError(
      `${source}: tensor "${name}" [${shape.join(', ')}] ${dtype} needs ${expected} bytes, offsets span ${offsets[1] - offsets[0]}`,
    );
  }
  return { dtype, shape, begin: offsets[0], end: offsets[1] };
}

/** Decodes one tensor's raw bytes into float32 values (copies, so any alignment works). */
export function decodeTensorBytes(bytes: Uint8Array, dtype: SafetensorsDtype): Float32Array {
  // An explicit copy into a fresh buffer: Node's Buffer#slice returns a view into a shared pool.
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  switch (dtype) {
    case 'F32':
      return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
    case 'F16':
      return f16ToF32(new Uint16Array(copy.buffer, 0, copy.byteLength / 2));
    case 'BF16':
      return bf16ToF32(new Uint16Array(copy.buffer, 0, copy.byteLength / 2));
  }
}

/** Decodes a whole safetensors file held in memory. */
export function decodeSafetensors(
  bytes: Uint8Array,
  source = 'buffer',
): {
  tensors: Map<string, HostTensor>;
  dtypes: Map<string, SafetensorsDtype>;
  metadata: Record<string, string>;
} {
  const header = parseSafetensorsHeader(bytes, source);
  const tensors = new Map<string, HostTensor>();
  const dtypes = new Map<string, SafetensorsDtype>();
  for (const [name, entry] of header.entries) {
    const begin = header.dataStart + entry.begin;
    const end = header.dataStart + entry.end;
    if (end > bytes.byteLength) {
      throw new SafetensorsError(`${source}: tensor "${name}" runs past the end of the file`);
    }
    tensors.set(name, {
      shape: entry.shape,
      data: decodeTensorBytes(bytes.subarray(begin, end), entry.dtype),
    });
    dtypes.set(name, entry.dtype);
  }
  return { tensors, dtypes, metadata: { ...header.metadata } };
}

/** Encodes tensors in the given dtype; `__metadata__` defaults to `{ format: 'pt' }` as PyTorch writers do. */
export function encodeSafetensors(
  tensors: ReadonlyMap<string, HostTensor>,
  options: { dtype?: SafetensorsDtype; metadata?: Record<string, string> } = {},
): Uint8Array {
  const dtype = options.dtype ?? 'F32';
  for (const [name, tensor] of tensors) {
    const count = tensor.shape.reduce((a, b) => a * b, 1);
    if (count !== tensor.data.length) {
      throw new SafetensorsError(
        `tensor "${name}": shape [${tensor.shape}] holds ${count} values, got ${tensor.data.length}`,
      );
    }
  }
  const shapes = [...tensors].map(([name, tensor]) => [name, tensor.shape] as const);
  const { header, dataBytes } = encodeSafetensorsHeader(shapes, dtype, options.metadata);
  const out = new Uint8Array(header.byteLength + dataBytes);
  out.set(header);
  let cursor = header.byteLength;
  for (const tensor of tensors.values()) {
    const raw = encodeValues(tensor.data, dtype);
    out.set(raw, cursor);
    cursor += raw.byteLength;
  }
  return out;
}

/**
 * The bytes before the data section (the 8-byte length and the JSON header) for tensors stored back to
 * back in the given order, and the data section's size; a streaming writer appends each tensor's
 * bytes after it (write-safetensors-stream.ts).
 */
export function encodeSafetensorsHeader(
  tensors: Iterable<readonly [string, readonly number[]]>,
  dtype: SafetensorsDtype,
  metadata: Record<string, string> = { format: 'pt' },
): { header: Uint8Array; dataBytes: number } {
  const json: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = shape.reduce((a, b) => a * b, 1) * dtypeBytes[dtype];
    json[name] = { dtype, shape: [...shape], data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const text = new TextEncoder().encode(JSON.stringify(json));
  // Pad the header with spaces so the data section starts 8-byte aligned, as the reference writer does.
  const padded = Math.ceil(text.byteLength / 8) * 8;
  const header = new Uint8Array(8 + padded);
  new DataView(header.buffer).setBigUint64(0, BigInt(padded), true);
  header.fill(0x20, 8);
  header.set(text, 8);
  return { header, dataBytes: offset };
}

/** float32 values as the little-endian bytes of `dtype` (a copy). */
export function encodeValues(values: Float32Array, dtype: SafetensorsDtype): Uint8Array {
  switch (dtype) {
    case 'F32': {
      const copy = Float32Array.from(values);
      return new Uint8Array(copy.buffer);
    }
    case 'F16':
      return new Uint8Array(f32ToF16(values).buffer);
    case 'BF16':
      return new Uint8Array(f32ToBf16(values).buffer);
  }
}

/** Bytes per element of a dtype. */
export function safetensorsDtypeBytes(dtype: SafetensorsDtype): number {
  return dtypeBytes[dtype];
}
