// Which Python runs the torch engine, and where its package lies: --torch-python (or
// EDGERL_TORCH_PYTHON), else the repository's own environment that `npm run setup:torch` makes.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EngineError } from '../engine-error.ts';

const repository = fileURLToPath(new URL('../../../', import.meta.url));

/** The environment `npm run setup:torch` makes (scripts/setup-torch.sh). */
export const defaultTorchPython = fileURLToPath(new URL('../../../.venv-torch/bin/python', import.meta.url));

/** The directory that holds the `edgerl_torch` package: the engine's PYTHONPATH. */
export const torchEnginePackageDir = `${repository}torch-engine`;

/** `configured`, or the default environment; throws engine-setup naming the fix when it is missing. */
export function findTorchPython(configured: string | undefined): string {
  const python = configured ?? defaultTorchPython;
  if (configured === undefined && !existsSync(python)) {
    throw new EngineError(
      'engine-setup',
      `the torch engine has no Python environment: ${python} does not exist; run \`npm run setup:torch\`, or pass --torch-python PATH (EDGERL_TORCH_PYTHON) naming a Python with torch, transformers, peft and safetensors`,
    );
  }
  return python;
}
