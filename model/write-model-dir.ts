// Writes a Hugging Face model directory: config.json, generation_config.json, the weights as
// model.safetensors or as shards plus model.safetensors.index.json (transformers' naming,
// `model-00001-of-00002.safetensors`), and the tokenizer files when given. Weights are streamed to
// disk chunk by chunk (write-safetensors-stream.ts), from host tensors or from a fill function, so
// a multi-gigabyte checkpoint is never held in memory.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HostTensor, SafetensorsDtype } from './safetensors.ts';
import { safetensorsDtypeBytes } from './safetensors.ts';
import { type FillTensor, writeSafetensorsStream } from './write-safetensors-stream.ts';

/** Weights produced while writing: name → shape in file order, and the values (see FillTensor). */
export interface StreamedWeights {
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  readonly fill: FillTensor;
}

export interface ModelDirContents {
  readonly config: object;
  readonly weights: ReadonlyMap<string, HostTensor> | StreamedWeights;
  readonly dtype: SafetensorsDtype;
  readonly generationConfig?: object;
  /** tokenizer.json: a value to serialise, or the file's text as is. */
  readonly tokenizerJson?: unknown;
  readonly tokenizerConfig?: unknown;
  /** Split the weights into shards of at most this many bytes (a tensor is never split). Default: one file. */
  readonly maxShardBytes?: number;
  /** Values per chunk when streaming (tests use small ones); default write-safetensors-stream.ts's. */
  readonly chunkElements?: number;
}

export async function writeModelDir(dir: string, contents: ModelDirContents): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  const json = async (name: string, value: unknown) => {
    await writeFile(
      join(dir, name),
      typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`,
    );
    written.push(name);
  };
  await json('config.json', contents.config);
  if (contents.generationConfig) await json('generation_config.json', contents.generationConfig);
  const { shapes, fill } = streamed(contents.weights);
  const shards = splitShards(shapes, contents.dtype, contents.maxShardBytes ?? Number.POSITIVE_INFINITY);
  const stream = (file: string, shard: ReadonlyMap<string, readonly number[]>) =>
    writeSafetensorsStream(join(dir, file), shard, contents.dtype, fill, {
      ...(contents.chunkElements === undefined ? {} : { chunkElements: contents.chunkElements }),
    });
  if (shards.length === 1) {
    await stream('model.safetensors', shards[0] as Map<string, readonly number[]>);
    written.push('model.safetensors');
  } else {
    const weightMap: Record<string, string> = {};
    let totalSize = 0;
    for (const [index, shard] of shards.entries()) {
      const file = `model-${String(index + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`;
      await stream(file, shard);
      written.push(file);
      for (const [name, shape] of shard) {
        weightMap[name] = file;
        totalSize += shape.reduce((a, b) => a * b, 1) * safetensorsDtypeBytes(contents.dtype);
      }
    }
    await json('model.safetensors.index.json', {
      metadata: { total_size: totalSize },
      weight_map: weightMap,
    });
  }
  if (contents.tokenizerJson !== undefined) await json('tokenizer.json', contents.tokenizerJson);
  if (contents.tokenizerConfig !== undefined) await json('tokenizer_config.json', contents.tokenizerConfig);
  return written;
}

function streamed(weights: ReadonlyMap<string, HostTensor> | StreamedWeights): StreamedWeights {
  if (!(weights instanceof Map)) return weights as StreamedWeights;
  const tensors = weights as ReadonlyMap<string, HostTensor>;
  const shapes = new Map<string, readonly number[]>();
  for (const [name, tensor] of tensors) {
    const count = tensor.shape.reduce((a, b) => a * b, 1);
    if (count !== tensor.data.length) {
      throw new Error(
        `tensor "${name}": shape [${tensor.shape}] holds ${count} values, got ${tensor.data.length}`,
      );
    }
    shapes.set(name, tensor.shape);
  }
  return {
    shapes,
    fill: (name, start, target) => {
      target.set((tensors.get(name) as HostTensor).data.subarray(start, start + target.length));
    },
  };
}

function splitShards(
  shapes: ReadonlyMap<string, readonly number[]>,
  dtype: SafetensorsDtype,
  maxBytes: number,
): Map<string, readonly number[]>[] {
  const shards: Map<string, readonly number[]>[] = [new Map()];
  let bytes = 0;
  for (const [name, shape] of shapes) {
    const size = shape.reduce((a, b) => a * b, 1) * safetensorsDtypeBytes(dtype);
    const current = shards[shards.length - 1] as Map<string, readonly number[]>;
    if (current.size > 0 && bytes + size > maxBytes) {
      shards.push(new Map([[name, shape]]));
      bytes = size;
    } else {
      current.set(name, shape);
      bytes += size;
    }
  }
  return shards;
}
