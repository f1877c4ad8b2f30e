import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSafetensorsFile } from './read-safetensors-file.ts';
import {
  decodeSafetensors,
  encodeSafetensors,
  type HostTensor,
  parseSafetensorsHeader,
} from './safetensors.ts';
import { fixtureDir } from '../test/support/model-fixtures.ts';

const tensors = new Map<string, HostTensor>([
  ['a', { shape: [2, 3], data: new Float32Array([0.1, -2, 3.25, 1e-3, 65504, -0]) }],
  ['b.bias', { shape: [1], data: new Float32Array([0.02]) }],
  ['empty', { shape: [0, 4], data: new Float32Array(0) }],
]);

describe('safetensors', () => {
  it('round-trips F32 exactly and F16/BF16 to their rounded values', () => {
    for (const dtype of ['F32', 'F16', 'BF16'] as const) {
      const { tensors: back, dtypes, metadata } = decodeSafetensors(encodeSafetensors(tensors, { dtype }));
      expect(metadata).toEqual({ format: 'pt' });
      expect([...back.keys()]).toEqual(['a', 'b.bias', 'empty']);
      expect(back.get('a')?.shape).toEqual([2, 3]);
      expect(dtypes.get('a')).toBe(dtype);
      const a = Array.from(back.get('a')?.data ?? []);
      const bias = back.get('b.bias')?.data[0];
      if (dtype === 'F32') {
        expect(a).toEqual(Array.from(tensors.get('a')?.data ?? []));
      } else if (dtype === 'F16') {
        // 0.1 → 0x2e66 = 0.0999755859375; 1e-3 → 0x1419 = 1.0004043579101562e-3; 65504 is exact.
        expect(a).toEqual([0.0999755859375, -2, 3.25, 0.0010004043579101562, 65504, -0]);
        expect(bias).toBe(0.0200042724609375); // 0x251f
      } else {
        // bfloat16 keeps 8 mantissa bits: 0.1 → 0x3dcd = 0.10009765625; 65504 → 65536 (rounded up).
        expect(a).toEqual([0.10009765625, -2, 3.25, 0.00099945068359375, 65536, -0]);
        expect(bias).toBe(0.02001953125);
      }
    }
  });

  it('lays out the header as the format specifies: u64 length, JSON padded with spaces to 8 bytes', () => {
    const bytes = encodeSafetensors(tensors, { dtype: 'BF16' });
    const length = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(length % 8).toBe(0);
    const json = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
    expect(json.a).toEqual({ dtype: 'BF16', shape: [2, 3], data_offsets: [0, 12] });
    expect(json['b.bias']).toEqual({ dtype: 'BF16', shape: [1], data_offsets: [12, 14] });
    expect(bytes.byteLength).toBe(8 + length + 14);
  });

  it('reads a file written by an independent writer (numpy, make_reference.py), also from a pooled Buffer', async () => {
    const path = join(fixtureDir('qwen2'), 'reference.safetensors');
    const fromBuffer = decodeSafetensors(readFileSync(path));
    const fromFile = await readSafetensorsFile(path);
    expect(fromBuffer.tensors.get('logits')?.shape).toEqual([2, 7, 128]);
    expect(Array.from(fromFile.get('logits')?.data ?? [])).toEqual(
      Array.from(fromBuffer.tensors.get('logits')?.data ?? []),
    );
    expect(fromBuffer.tensors.get('logits')?.data.every(Number.isFinite)).toBe(true);
  });

  it('names the tensor and the problem in errors', async () => {
    const good = encodeSafetensors(tensors);
    const header = (json: object) => {
      const text = new TextEncoder().encode(JSON.stringify(json));
      const out = new Uint8Array(8 + text.length + 16);
      new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
      out.set(text, 8);
      return out;
    };
    expect(() =>
      parseSafetensorsHeader(header({ w: { dtype: 'I64', shape: [2], data_offsets: [0, 16] } })),
    ).toThrow(/tensor "w" has dtype "I64"; supported: F32, F16, BF16/);
    expect(() =>
      parseSafetensorsHeader(header({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } })),
    ).toThrow(/tensor "w" \[3\] F32 needs 12 bytes, offsets span 8/);
    expect(() => decodeSafetensors(good.subarray(0, good.byteLength - 4))).toThrow(
      /tensor "b\.bias" runs past the end/,
    );
    const dir = await mkdtemp(join(tmpdir(), 'edgerl-st-'));
    await writeFile(join(dir, 'x.safetensors'), good);
    await expect(readSafetensorsFile(join(dir, 'x.safetensors'), ['nope'])).rejects.toThrow(
      /no tensor named "nope"/,
    );
  });
});
