// Which engine the trainer tests and fault scenarios run on: EDGERL_TEST_ENGINE=torch runs them on the
// PyTorch engine (the Python of EDGERL_TORCH_PYTHON, or the repository's .venv-torch/), anything else
// or nothing on tfjs. The `torch` test project needs the torch engine set up (`npm run setup:torch`).
// Test-only.
import { existsSync } from 'node:fs';
import type { EngineKind } from '../../trainer/engine/train-engine.ts';
import { defaultTorchPython } from '../../trainer/engine/torch/find-python.ts';

export function testEngineKind(): EngineKind {
  return process.env.EDGERL_TEST_ENGINE === 'torch' ? 'torch' : 'tfjs';
}

/** `edgerl train` flags for the test engine. */
export function testEngineArgs(): string[] {
  return testEngineKind() === 'torch' ? ['--engine', 'torch', '--torch-python', torchPython()] : [];
}

/** The train config's engine slice for the test engine. */
export function testEngineSettings(): { readonly kind: EngineKind; readonly python?: string } {
  return testEngineKind() === 'torch' ? { kind: 'torch', python: torchPython() } : { kind: 'tfjs' };
}

/**
 * Whether the torch engine can run here. Scenarios that need it skip without it on a developer's
 * machine; with EDGERL_TEST_TORCH=required (CI, after `npm run setup:torch`) a missing one fails them.
 */
export function torchAvailable(): boolean {
  if (process.env.EDGERL_TEST_TORCH === 'required') return torchPython() !== '';
  return existsSync(process.env.EDGERL_TORCH_PYTHON ?? defaultTorchPython);
}

/** The Python the torch tests run the engine with; a clear error when there is none. */
export function torchPython(): string {
  const python = process.env.EDGERL_TORCH_PYTHON ?? defaultTorchPython;
  if (!existsSync(python)) {
    throw new Error(
      `the torch engine is not set up: ${python} does not exist (run \`npm run setup:torch\`, or set EDGERL_TORCH_PYTHON)`,
    );
  }
  return python;
}
