// Reads and writes LoRA adapters in PEFT's on-disk format, which vLLM (--enable-lora,
// /v1/load_lora_adapter) and peft's PeftModel.from_pretrained both load: `adapter_config.json`
// (LoraConfig fields, keys sorted, as PeftConfig.save_pretrained writes them) and
// `adapter_model.safetensors` with keys `base_model.model.model.layers.{i}.{self_attn|mlp}.{proj}.lora_{A|B}.weight`,
// A [r, in], B [out, r]. Leaves out DoRA, rank/alpha patterns, modules_to_save and trained biases
// (vLLM rejects those too).
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import type { ModelConfig, Projection } from './hf-config.ts';
import { projections } from './hf-config.ts';
import type { LoraAdapter, LoraConfig } from './lora.ts';
import { createLoraAdapter, resolveLoraConfig } from './lora.ts';
import { readSafetensorsFile, readSafetensorsHeader } from './read-safetensors-file.ts';
import { encodeSafetensors, type HostTensor, type SafetensorsDtype } from './safetensors.ts';
import { projectionModule, projectionShape } from './weight-names.ts';
import { errorMessage } from '../protocol/error-message.ts';

export const adapterConfigFile = 'adapter_config.json';
export const adapterWeightsFile = 'adapter_model.safetensors';

export class PeftAdapterError extends Error {
  override readonly name = 'PeftAdapterError';
  readonly code = 'invalid-peft-adapter';
}

/** PEFT's state-dict key (adapter name stripped, as save_pretrained does). */
export function peftTensorName(layer: number, projection: Projection, which: 'A' | 'B'): string {
  return `base_model.model.model.layers.${layer}.${projectionModule(projection)}.${projection}.lora_${which}.weight`;
}

/**
 * adapter_config.json as PEFT 0.10–0.13 writes it for a LoRA on a causal LM (every LoraConfig field
 * those versions know, so both older and newer PEFT and vLLM's PEFTHelper accept it).
 */
export function peftAdapterConfigJson(
  config: LoraConfig,
  baseModelNameOrPath: string | null,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: baseModelNameOrPath,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: config.initLoraWeights,
    layer_replication: null,
    layers_pattern: null,
    layers_to_transform: null,
    loftq_config: {},
    lora_alpha: config.alpha,
    lora_dropout: config.dropout,
    megatron_config: null,
    megatron_core: 'megatron.core',
    modules_to_save: null,
    peft_type: 'LORA',
    r: config.r,
    rank_pattern: {},
    revision: null,
    target_modules: [...config.targets].sort(),
    task_type: 'CAUSAL_LM',
    use_dora: false,
    use_rslora: config.useRslora,
  };
  return Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Host copies of the adapter's matrices in PEFT layout (A [r, in], B [out, r]), keyed by PEFT name. */
export async function peftTensors(adapter: LoraAdapter): Promise<Map<string, HostTensor>> {
  const out = new Map<string, HostTensor>();
  for (const [layer, entry] of adapter.layers.entries()) {
    for (const projection of projections) {
      const pair = entry[projection];
      if (!pair) continue;
      const a = tf.transpose(pair.aT); // [r, in]
      const b = tf.transpose(pair.bT); // [out, r]
      out.set(peftTensorName(layer, projection, 'A'), {
        shape: a.shape,
        data: (await a.data()) as Float32Array,
      });
      out.set(peftTensorName(layer, projection, 'B'), {
        shape: b.shape,
        data: (await b.data()) as Float32Array,
      });
      tf.dispose([a, b]);
    }
  }
  return out;
}

/** Writes `adapter_config.json` and `adapter_model.safetensors` into `dir` (created if needed). */
export async function savePeftAdapter(
  dir: string,
  adapter: LoraAdapter,
  options: { baseModelNameOrPath?: string | null; dtype?: SafetensorsDtype } = {},
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const config = peftAdapterConfigJson(adapter.config, options.baseModelNameOrPath ?? null);
  await writeFile(join(dir, adapterConfigFile), `${JSON.stringify(config, null, 2)}\n`);
  const bytes = encodeSafetensors(await peftTensors(adapter), { dtype: options.dtype ?? 'F32' });
  await writeFile(join(dir, adapterWeightsFile), bytes);
}

/** Validates adapter_config.json and returns the LoRA settings; names what is unsupported. */
export function parsePeftAdapterConfig(
  json: unknown,
  source: string,
  tensorTargets?: readonly Projection[],
): LoraConfig {
  if (typeof json !== 'object' || json === null) throw new PeftAdapterError(`${source}: not a JSON object`);
  const raw = json as Record<string, unknown>;
  const fail = (message: string): never => {
    throw new PeftAdapterError(`${source}: ${message}`);
  };
  if (raw.peft_type !== 'LORA')
    fail(`peft_type is ${JSON.stringify(raw.peft_type)}; only "LORA" adapters load`);
  if (!Number.isInteger(raw.r) || (raw.r as number) < 1)
    fail(`r must be a positive integer, got ${JSON.stringify(raw.r)}`);
  const alpha = raw.lora_alpha ?? 8;
  if (typeof alpha !== 'number' || !(alpha > 0))
    fail(`lora_alpha must be a positive number, got ${JSON.stringify(alpha)}`);
  if (raw.use_dora === true) fail('use_dora=true (DoRA) is not supported');
  if ((raw.bias ?? 'none') !== 'none') fail(`bias "${String(raw.bias)}" is not supported; only "none"`);
  if (raw.fan_in_fan_out === true) fail('fan_in_fan_out=true is not supported (Llama/Qwen2 use nn.Linear)');
  const nonEmpty = (key: string) => {
    const value = raw[key];
    return (
      value != null &&
      (Array.isArray(value) ? value.length > 0 : typeof value === 'object' && Object.keys(value).length > 0)
    );
  };
  for (const key of ['modules_to_save', 'rank_pattern', 'alpha_pattern']) {
    if (nonEmpty(key)) fail(`${key} is set; per-module ranks and extra saved modules are not supported`);
  }
  if (raw.layers_to_transform != null) fail('layers_to_transform is set; adapters must cover every layer');
  const targets = parseTargets(raw.target_modules, tensorTargets, fail);
  const dropout = raw.lora_dropout ?? 0;
  if (typeof dropout !== 'number') fail(`lora_dropout must be a number, got ${JSON.stringify(dropout)}`);
  try {
    return resolveLoraConfig({
      r: raw.r as number,
      alpha: alpha as number,
      dropout: dropout as number,
      targets,
      useRslora: raw.use_rslora === true,
      initLoraWeights: raw.init_lora_weights !== false,
    });
  } catch (error) {
    return fail(errorMessage(error));
  }
}

function parseTargets(
  value: unknown,
  tensorTargets: readonly Projection[] | undefined,
  fail: (message: string) => never,
): Projection[] {
  if (value === 'all-linear') return [...projections];
  if (typeof value === 'string') {
    // A regex over full module names: trust the tensors present instead of re-implementing re.fullmatch.
    if (!tensorTargets || tensorTargets.length === 0)
      fail(`target_modules regex "${value}" matches no tensors`);
    return [...(tensorTargets as Projection[])];
  }
  if (!Array.isArray(value) || value.length === 0)
    fail('target_modules must be a non-empty list of module names');
  const out: Projection[] = [];
  const unknown: string[] = [];
  for (const entry of value as unknown[]) {
    // PEFT matches a list entry against the end of the module path, so "self_attn.q_proj" means q_proj.
    const match = projections.find(
      (p) => entry === p || (typeof entry === 'string' && entry.endsWith(`.${p}`)),
    );
    if (match) out.push(match);
    else unknown.push(String(entry));
  }
  if (unknown.length > 0) {
    fail(`target_modules ${unknown.join(', ')} are not supported; LoRA can target ${projections.join(', ')}`);
  }
  return [...new Set(out)];
}

/** JSON.parse's error names no file; this one names it (the config path a loader was given). */
function parseJsonFile(text: string, path: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new PeftAdapterError(`${path}: not valid JSON (${errorMessage(error)})`, { cause: error });
  }
}

/** Reads a PEFT adapter directory and builds adapter `name` for this model; names missing/unexpected tensors. */
export async function loadPeftAdapter(dir: string, model: ModelConfig, name: string): Promise<LoraAdapter> {
  const configPath = join(dir, adapterConfigFile);
  const weightsPath = join(dir, adapterWeightsFile);
  if (!existsSync(configPath)) throw new PeftAdapterError(`${dir}: no ${adapterConfigFile}`);
  if (!existsSync(weightsPath)) {
    const hint = existsSync(join(dir, 'adapter_model.bin'))
      ? ' (adapter_model.bin is a pickle and is not read)'
      : '';
    throw new PeftAdapterError(`${dir}: no ${adapterWeightsFile}${hint}`);
  }
  const header = await readSafetensorsHeader(weightsPath);
  const present = [...header.entries.keys()];
  const tensorTargets = projections.filter((p) => present.some((key) => key.includes(`.${p}.lora_A.`)));
  const json = parseJsonFile(await readFile(configPath, 'utf8'), configPath);
  const config = parsePeftAdapterConfig(json, configPath, tensorTargets);
  const expected = new Map<string, readonly number[]>();
  for (let layer = 0; layer < model.numLayers; layer++) {
    for (const projection of config.targets) {
      const [out, input] = projectionShape(model, projection);
      expected.set(peftTensorName(layer, projection, 'A'), [config.r, input]);
      expected.set(peftTensorName(layer, projection, 'B'), [out, config.r]);
    }
  }
  const missing = [...expected.keys()].filter((key) => !header.entries.has(key));
  const unexpected = present.filter((key) => !expected.has(key));
  const misShaped = [...expected]
    .filter(([key, shape]) => {
      const entry = header.entries.get(key);
      return entry !== undefined && entry.shape.join(',') !== shape.join(',');
    })
    .map(
      ([key, shape]) =>
        `${key} is [${header.entries.get(key)?.shape.join(', ')}], expected [${shape.join(', ')}]`,
    );
  const problems = [
    missing.length > 0
      ? `missing tensors: ${missing.slice(0, 8).join(', ')}${missing.length > 8 ? ` and ${missing.length - 8} more` : ''}`
      : '',
    unexpected.length > 0
      ? `unexpected tensors: ${unexpected.slice(0, 8).join(', ')}${unexpected.length > 8 ? ` and ${unexpected.length - 8} more` : ''}`
      : '',
    misShaped.length > 0 ? `wrong shapes: ${misShaped.slice(0, 8).join(', ')}` : '',
  ].filter(Boolean);
  if (problems.length > 0) {
    throw new PeftAdapterError(
      `${weightsPath}: adapter does not fit this ${model.architecture} model: ${problems.join('; ')}`,
    );
  }
  const host = await readSafetensorsFile(weightsPath, [...expected.keys()]);
  return createLoraAdapter(model, name, config, {
    weights: (layer, projection) =>
      tf.tidy(() => {
        const a = host.get(peftTensorName(layer, projection, 'A')) as HostTensor;
        const b = host.get(peftTensorName(layer, projection, 'B')) as HostTensor;
        return {
          aT: tf.transpose(tf.tensor2d(a.data, [a.shape[0] as number, a.shape[1] as number])) as tf.Tensor2D, // [in, r]
          bT: tf.transpose(tf.tensor2d(b.data, [b.shape[0] as number, b.shape[1] as number])) as tf.Tensor2D, // [r, out]
        };
      }),
  });
}
