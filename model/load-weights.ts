// Loads a Hugging Face checkpoint's tensors from a model directory: `model.safetensors`, or the shards
// listed in `model.safetensors.index.json`. Every dtype is widened to float32. Checks the tensor set
// against the config and names every missing, unexpected or mis-shaped tensor in one error.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelConfig } from './hf-config.ts';
import { readSafetensorsFile, readSafetensorsHeader } from './read-safetensors-file.ts';
import type { HostTensor } from './safetensors.ts';
import { expectedWeights, isIgnorableWeight } from './weight-names.ts';

export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
  readonly code = 'invalid-checkpoint';
}

/** Returns every tensor the config needs, name → float32 host tensor. */
export async function loadCheckpointWeights(
  dir: string,
  config: ModelConfig,
): Promise<Map<string, HostTensor>> {
  const files = await locateTensors(dir);
  const shapes = new Map<string, readonly number[]>();
  for (const [file, names] of files) {
    const header = await readSafetensorsHeader(join(dir, file));
    for (const name of names) {
      const entry = header.entries.get(name);
      if (!entry)
        throw new CheckpointError(`${join(dir, file)}: the index lists "${name}" but the shard lacks it`);
      shapes.set(name, entry.shape);
    }
  }
  checkTensorSet(shapes, config, dir);
  const expected = expectedWeights(config);
  const out = new Map<string, HostTensor>();
  for (const [file, names] of files) {
    const wanted = names.filter((name) => expected.has(name));
    if (wanted.length === 0) continue;
    for (const [name, tensor] of await readSafetensorsFile(join(dir, file), wanted)) out.set(name, tensor);
  }
  return out;
}

/** file → tensor names in it, from the index when the checkpoint is sharded. */
async function locateTensors(dir: string): Promise<Map<string, string[]>> {
  const indexPath = join(dir, 'model.safetensors.index.json');
  if (existsSync(indexPath)) {
    const index = JSON.parse(await readFile(indexPath, 'utf8')) as { weight_map?: unknown };
    const map = index.weight_map;
    if (typeof map !== 'object' || map === null) {
      throw new CheckpointError(`${indexPath}: no "weight_map" object`);
    }
    const files = new Map<string, string[]>();
    for (const [name, file] of Object.entries(map)) {
      if (typeof file !== 'string' || file.includes('/') || file.includes('\\')) {
        throw new CheckpointError(
          `${indexPath}: "${name}" maps to an invalid shard name ${JSON.stringify(file)}`,
        );
      }
      files.set(file, [...(files.get(file) ?? []), name]);
    }
    return files;
  }
  const single = join(dir, 'model.safetensors');
  if (existsSync(single)) {
    const header = await readSafetensorsHeader(single);
    return new Map([['model.safetensors', [...header.entries.keys()]]]);
  }
  const hint = existsSync(join(dir, 'pytorch_model.bin'))
    ? ' (pytorch_model.bin is a pickle and is not read; convert it to safetensors)'
    : '';
  throw new CheckpointError(`${dir}: no model.safetensors or model.safetensors.index.json${hint}`);
}

/** Throws naming every missing, unexpected and mis-shaped tensor. */
export function checkTensorSet(
  found: ReadonlyMap<string, readonly number[]>,
  config: ModelConfig,
  source: string,
): void {
  const expected = expectedWeights(config);
  const missing = [...expected.keys()].filter((name) => !found.has(name));
  const unexpected = [...found.keys()].filter(
    (name) => !expected.has(name) && !isIgnorableWeight(name, config),
  );
  const misShaped = [...expected]
    .filter(([name, shape]) => {
      const actual = found.get(name);
      return actual !== undefined && actual.join(',') !== shape.join(',');
    })
    .map(
      ([name, shape]) => `${name} is [${found.get(name)?.join(', ')}], config needs [${shape.join(', ')}]`,
    );
  const problems = [
    missing.length > 0 ? `missing tensors: ${list(missing)}` : '',
    unexpected.length > 0 ? `unexpected tensors: ${list(unexpected)}` : '',
    misShaped.length > 0 ? `wrong shapes: ${list(misShaped)}` : '',
  ].filter(Boolean);
  if (problems.length > 0) {
    throw new CheckpointError(
      `${source}: checkpoint does not match config.json (${config.architecture}): ${problems.join('; ')}`,
    );
  }
}

function list(items: string[]): string {
  const shown = items.slice(0, 12).join(', ');
  return items.length > 12 ? `${shown} and ${items.length - 12} more` : shown;
}
