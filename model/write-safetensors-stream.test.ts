// The streaming writer against the in-memory encoder: byte for byte the same file for every dtype,
// whatever the chunk size (chunks that split tensors, and tensors smaller than a chunk).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from './rng.ts';
import { encodeSafetensors, type HostTensor } from './safetensors.ts';
import { writeSafetensorsStream } from './write-safetensors-stream.ts';

describe('writeSafetensorsStream', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'edgerl-stream-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const rng = createRng(3);
  const tensor = (shape: number[]): HostTensor => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    rng.fillNormal(data, 1);
    return { shape, data };
  };
  const tensors = new Map<string, HostTensor>([
    ['a.weight', tensor([37, 11])],
    ['a.bias', tensor([37])],
    ['scalar', tensor([])],
    ['b.weight', tensor([5, 3, 7])],
  ]);
  const shapes = new Map([...tensors].map(([name, { shape }]) => [name, shape]));

  for (const dtype of ['F32', 'BF16', 'F16'] as const) {
    it(`writes the bytes encodeSafetensors gives (${dtype}), chunked or not`, async () => {
      const want = encodeSafetensors(tensors, { dtype });
      for (const chunkElements of [1, 10, 64, 1 << 20]) {
        const path = join(dir, `${dtype}-${chunkElements}.safetensors`);
        const calls: string[] = [];
        const size = await writeSafetensorsStream(
          path,
          shapes,
          dtype,
          (name, start, target) => {
            calls.push(`${name}@${start}`);
            target.set((tensors.get(name) as HostTensor).data.subarray(start, start + target.length));
          },
          { chunkElements },
        );
        expect(size).toBe(want.byteLength);
        expect(new Uint8Array(await readFile(path))).toEqual(want);
        if (chunkElements === 64) {
          // 407 values of a.weight in chunks of 64: starts 0, 64, …, 384; then the smaller tensors.
          expect(calls).toEqual([
            ...Array.from({ length: 7 }, (_, i) => `a.weight@${i * 64}`),
            'a.bias@0',
            'scalar@0',
            'b.weight@0',
            'b.weight@64',
          ]);
        }
      }
    });
  }
});
