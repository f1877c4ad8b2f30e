// Writes a Hugging Face model directory: config.json, generation_config.json, the weights as
// model.safetensors or as shards plus model.safetensors.index.json (transformers' naming,
// `model-00001-of-00002.safetensors`), and the tokenizer files when given.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  encodeSafetensors,
  type HostTensor,
  type SafetensorsDtype,
  safetensorsDtypeBytes,
} from './safetensors.ts';

export interface ModelDirContents {
  readonly config: object;
  readonly weights: ReadonlyMap<string, HostTensor>;
  readonly dtype: SafetensorsDtype;
  readonly generationConfig?: object;
  readonly tokenizerJson?: unknown;
  readonly tokenizerConfig?: unknown;
  /** Split the weights into shards of at most this many bytes (a tensor is never split). Default: one file. */
  readonly maxShardBytes?: number;
}

export async function writeModelDir(dir: string, contents: ModelDirContents): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  const json = async (name: string, value: unknown) => {
    await writeFile(join(dir, name), `${JSON.stringify(value, null, 2)}\n`);
    written.push(name);
  };
  await json('config.json', contents.config);
  if (contents.generationConfig) await json('generation_config.json', contents.generationConfig);
  const shards = splitShards(
    contents.weights,
    contents.dtype,
    contents.maxShardBytes ?? Number.POSITIVE_INFINITY,
  );
  if (shards.length === 1) {
    await writeFile(
      join(dir, 'model.safetensors'),
      encodeSafetensors(shards[0] as Map<string, HostTensor>, { dtype: contents.dtype }),
    );
    written.push('model.safetensors');
  } else {
    const weightMap: Record<string, string> = {};
    let totalSize = 0;
    for (const [index, shard] of shards.entries()) {
      const file = `model-${String(index + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`;
      await writeFile(join(dir, file), encodeSafetensors(shard, { dtype: contents.dtype }));
      written.push(file);
      for (const [name, tensor] of shard) {
        weightMap[name] = file;
        totalSize += tensor.data.length * safetensorsDtypeBytes(contents.dtype);
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

function splitShards(
  weights: ReadonlyMap<string, HostTensor>,
  dtype: SafetensorsDtype,
  maxBytes: number,
): Map<string, HostTensor>[] {
  const shards: Map<string, HostTensor>[] = [new Map()];
  let bytes = 0;
  for (const [name, tensor] of weights) {
    const size = tensor.data.length * safetensorsDtypeBytes(dtype);
    const current = shards[shards.length - 1] as Map<string, HostTensor>;
    if (current.size > 0 && bytes + size > maxBytes) {
      shards.push(new Map([[name, tensor]]));
      bytes = size;
    } else {
      current.set(name, tensor);
      bytes += size;
    }
  }
  return shards;
}
