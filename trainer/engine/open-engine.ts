// Opens the engine the settings name on a model directory: the one place that knows every engine.
import { assertNever } from '../../protocol/statuses.ts';
import type { EngineSettings } from './engine-settings.ts';
import { TfjsEngine } from './tfjs/tfjs-engine.ts';
import { TorchEngine } from './torch/torch-engine.ts';
import type { TrainEngine } from './train-engine.ts';

export interface OpenEngineOptions {
  readonly modelDir: string;
  /** tfjs: gradient worker threads (null: the backend's default). */
  readonly workers: number | null;
  readonly log: (line: string) => void;
  /** The seed the torch engine seeds its generators with (LoRA dropout). */
  readonly seed?: number;
}

export function openEngine(settings: EngineSettings, options: OpenEngineOptions): Promise<TrainEngine> {
  switch (settings.kind) {
    case 'tfjs':
      return TfjsEngine.open(options.modelDir, { workers: options.workers, log: options.log });
    case 'torch':
      return TorchEngine.open(options.modelDir, settings, { log: options.log, seed: options.seed ?? 0 });
    default:
      return assertNever(settings.kind, 'engine');
  }
}
