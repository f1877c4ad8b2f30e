// A checkpoint's optimizer.safetensors, the same for every engine (format `edgerl-adamw/2`): AdamW's
// first and second moments as `m.<key>` / `v.<key>` float32 tensors, `<key>` the adapter matrix's PEFT
// name in PEFT's layout (A [r, in], B [out, r]), the step count in the metadata. The PyTorch engine
// writes and reads the same file (torch-engine/edgerl_torch/optimizer_state.py), so a lineage may move
// between engines. Format 1 (tfjs variable names, transposed layout) is still read. Leaves out which
// matrices train: a moment missing from the file is an error the engine reports.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Projection, projections } from '../../model/hf-config.ts';
import { peftTensorName } from '../../model/peft-adapter.ts';
import { decodeSafetensors, encodeSafetensors, type HostTensor } from '../../model/safetensors.ts';

export const optimizerFile = 'optimizer.safetensors';
export const optimizerFormat = 'edgerl-adamw/2';
const legacyFormat = 'edgerl-adamw';

export interface Moment {
  /** PEFT layout. */
  readonly shape: readonly number[];
  readonly m: Float32Array;
  readonly v: Float32Array;
}

export interface OptimizerMoments {
  /** Steps taken so far (t of the last update). */
  readonly step: number;
  /** By PEFT tensor name, in the optimiser's order. */
  readonly moments: ReadonlyMap<string, Moment>;
}

export function encodeOptimizerMoments(state: OptimizerMoments): Uint8Array {
  const tensors = new Map<string, HostTensor>();
  for (const [key, moment] of state.moments) {
    tensors.set(`m.${key}`, { shape: moment.shape, data: moment.m });
    tensors.set(`v.${key}`, { shape: moment.shape, data: moment.v });
  }
  return encodeSafetensors(tensors, { metadata: { format: optimizerFormat, step: String(state.step) } });
}

/** Reads `dir`'s optimizer.safetensors, either format, as PEFT-keyed moments. */
export async function readOptimizerMoments(dir: string): Promise<OptimizerMoments> {
  const path = join(dir, optimizerFile);
  const bytes = new Uint8Array(await readFile(path));
  const { tensors, metadata } = decodeSafetensors(bytes, path);
  const step = Number(metadata.step);
  if (!Number.isInteger(step) || step < 0) throw new Error(`${path}: step "${metadata.step}" is not a count`);
  if (metadata.format === legacyFormat) return { step, moments: legacyMoments(tensors, metadata, path) };
  if (metadata.format !== optimizerFormat) {
    throw new Error(`${path}: format "${metadata.format}", this trainer reads ${optimizerFormat}`);
  }
  const moments = new Map<string, Moment>();
  for (const [name, m] of tensors) {
    if (!name.startsWith('m.')) continue;
    const key = name.slice(2);
    const v = tensors.get(`v.${key}`);
    if (!v) throw new Error(`${path}: ${key} has a first moment but no second`);
    moments.set(key, { shape: [...m.shape], m: m.data, v: v.data });
  }
  return { step, moments };
}

/** Format 1: `m.<i>`/`v.<i>` in tfjs variable order, names in the metadata, transposed (Aᵀ, Bᵀ). */
function legacyMoments(
  tensors: ReadonlyMap<string, HostTensor>,
  metadata: Record<string, string>,
  path: string,
): Map<string, Moment> {
  const names = JSON.parse(metadata.names ?? '[]') as string[];
  const moments = new Map<string, Moment>();
  names.forEach((name, index) => {
    const m = tensors.get(`m.${index}`);
    const v = tensors.get(`v.${index}`);
    if (!m || !v) throw new Error(`${path}: moments of variable ${index} (${name}) are missing`);
    const key = peftKeyOfVariable(name);
    if (!key) throw new Error(`${path}: variable ${name} is not a LoRA matrix`);
    const [rows, columns] = m.shape as [number, number];
    moments.set(key, {
      shape: [columns, rows],
      m: transpose(m.data, rows, columns),
      v: transpose(v.data, rows, columns),
    });
  });
  return moments;
}

/** The PEFT name of a tfjs LoRA variable (`lora/<n>/<adapter>/layers.<i>.<proj>.lora_<A|B>`, model/lora.ts). */
export function peftKeyOfVariable(name: string): string | undefined {
  const match = /layers\.(\d+)\.(\w+)\.lora_([AB])$/.exec(name);
  const projection = match?.[2] as Projection | undefined;
  if (!match || !projection || !projections.includes(projection)) return undefined;
  return peftTensorName(Number(match[1]), projection, match[3] as 'A' | 'B');
}

/** [rows, columns] row-major → [columns, rows] row-major. */
export function transpose(data: Float32Array, rows: number, columns: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < columns; c++) out[c * rows + r] = data[r * columns + c] as number;
  return out;
}
