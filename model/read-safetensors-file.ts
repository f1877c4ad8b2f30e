// Reads tensors from a safetensors file on disk with positioned reads, so a checkpoint larger than
// one Node buffer (2–4 GB) still loads; only the requested tensors are read.
import { open } from 'node:fs/promises';
import {
  decodeTensorBytes,
  type HostTensor,
  parseSafetensorsHeader,
  type SafetensorsHeader,
  SafetensorsError,
} from './safetensors.ts';

/** Reads just the header of a safetensors file. */
export async function readSafetensorsHeader(path: string): Promise<SafetensorsHeader> {
  const file = await open(path, 'r');
  try {
    return await readHeader(file, path);
  } finally {
    await file.close();
  }
}

/** Reads the named tensors (all of them when `names` is omitted) as float32. */
export async function readSafetensorsFile(
  path: string,
  names?: readonly string[],
): Promise<Map<string, HostTensor>> {
  const file = await open(path, 'r');
  try {
    const header = await readHeader(file, path);
    const { size } = await file.stat();
    const wanted = names ?? [...header.entries.keys()];
    const out = new Map<string, HostTensor>();
    for (const name of wanted) {
      const entry = header.entries.get(name);
      if (!entry) throw new SafetensorsError(`${path}: no tensor named "${name}"`);
      const length = entry.end - entry.begin;
      if (header.dataStart + entry.end > size) {
        throw new SafetensorsError(`${path}: tensor "${name}" runs past the end of the file`);
      }
      const bytes = new Uint8Array(length);
      await readFully(file, bytes, header.dataStart + entry.begin);
      out.set(name, { shape: entry.shape, data: decodeTensorBytes(bytes, entry.dtype) });
    }
    return out;
  } finally {
    await file.close();
  }
}

type FileHandle = Awaited<ReturnType<typeof open>>;

async function readHeader(file: FileHandle, path: string): Promise<SafetensorsHeader> {
  const lengthBytes = new Uint8Array(8);
  const { bytesRead } = await file.read(lengthBytes, 0, 8, 0);
  if (bytesRead < 8) throw new SafetensorsError(`${path}: shorter than the 8-byte header length`);
  const headerLength = Number(new DataView(lengthBytes.buffer).getBigUint64(0, true));
  if (headerLength > 100_000_000) {
    throw new SafetensorsError(`${path}: header length ${headerLength} is over 100000000 bytes`);
  }
  const prefix = new Uint8Array(8 + headerLength);
  await readFully(file, prefix, 0);
  return parseSafetensorsHeader(prefix, path);
}

async function readFully(file: FileHandle, into: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < into.byteLength) {
    // fs.read takes at most 2^31 - 1 bytes per call; read in 1 GiB steps.
    const length = Math.min(into.byteLength - done, 1 << 30);
    const { bytesRead } = await file.read(into, done, length, position + done);
    if (bytesRead === 0) throw new SafetensorsError('unexpected end of file');
    done += bytesRead;
  }
}
