// A fresh adapter written as PEFT files by edgerl's own initialisation (model/lora.ts: A Kaiming-uniform
// or orthogonal, B = 0, from the seed's generator), for engines that load it rather than draw their own:
// the same seed then gives the same starting adapter on every engine, so a run can be repeated or moved
// between tfjs and torch. Leaves out loading it (the engine's).
import type { ModelConfig } from '../../model/hf-config.ts';
import { createLoraAdapter, disposeLoraAdapter, resolveLoraConfig } from '../../model/lora.ts';
import { savePeftAdapter } from '../../model/peft-adapter.ts';
import type { AdapterSettings } from './train-engine.ts';

export async function writeFreshAdapter(
  dir: string,
  model: ModelConfig,
  settings: AdapterSettings,
  options: { readonly seed: number; readonly baseModelNameOrPath: string },
): Promise<void> {
  const adapter = createLoraAdapter(model, 'fresh', resolveLoraConfig(settings), { seed: options.seed });
  try {
    await savePeftAdapter(dir, adapter, { baseModelNameOrPath: options.baseModelNameOrPath });
  } finally {
    disposeLoraAdapter(adapter);
  }
}
