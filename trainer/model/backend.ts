// Picks the TensorFlow.js backend at run time: @tensorflow/tfjs-node-gpu (CUDA) when installed, then
// @tensorflow/tfjs-node (libtensorflow on CPU), then the bundled wasm backend, then plain JS cpu.
// The native packages are optional: they download libtensorflow 2.9.1 at install time, which an
// offline machine cannot do, so nothing here requires them (see README "Model runtime").
import * as tf from '@tensorflow/tfjs';
import { registerTransposeFreeMatMulGradient } from './matmul-gradient.ts';

export type BackendChoice = 'node-gpu' | 'node' | 'wasm' | 'cpu';

interface BackendSpec {
  /** Name under which tfjs registers the backend. */
  readonly tfName: string;
  /** npm package that provides it, imported on demand. */
  readonly packageName: string | null;
  readonly setup?: () => void;
}

export const backendChoices = {
  'node-gpu': { tfName: 'tensorflow', packageName: '@tensorflow/tfjs-node-gpu' },
  node: { tfName: 'tensorflow', packageName: '@tensorflow/tfjs-node' },
  wasm: {
    tfName: 'wasm',
    packageName: '@tensorflow/tfjs-backend-wasm',
    setup: registerTransposeFreeMatMulGradient,
  },
  cpu: { tfName: 'cpu', packageName: null },
} satisfies Record<BackendChoice, BackendSpec>;

/** Tried in this order when nothing is requested. */
export const backendPreference: readonly BackendChoice[] = ['node-gpu', 'node', 'wasm', 'cpu'];

export class BackendError extends Error {
  override readonly name = 'BackendError';
}

export interface SelectedBackend {
  readonly choice: BackendChoice;
  /** Why this one: requested, or which earlier choices were unavailable. */
  readonly reason: string;
}

let current: SelectedBackend | undefined;

export function isBackendChoice(value: string): value is BackendChoice {
  return Object.hasOwn(backendChoices, value);
}

/**
 * Activates a backend and prints the choice once (through `log`). `requested` (from a flag or the
 * EDGERL_BACKEND variable, read by the entry point) skips the search and fails if unavailable.
 */
export async function selectBackend(
  options: { requested?: string; log?: (line: string) => void } = {},
): Promise<SelectedBackend> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const requested = options.requested?.trim() || undefined;
  if (requested !== undefined && !isBackendChoice(requested)) {
    throw new BackendError(`unknown backend "${requested}"; choose one of ${backendPreference.join(', ')}`);
  }
  if (current && (requested === undefined || requested === current.choice)) return current;
  let selected: SelectedBackend;
  if (requested !== undefined) {
    const failure = await activate(requested);
    if (failure) throw new BackendError(`backend "${requested}" is not available: ${failure}`);
    selected = { choice: requested, reason: 'requested' };
  } else {
    const skipped: string[] = [];
    let found: BackendChoice | undefined;
    for (const choice of backendPreference) {
      const failure = await activate(choice);
      if (!failure) {
        found = choice;
        break;
      }
      skipped.push(`${choice}: ${failure}`);
    }
    if (!found) throw new BackendError(`no TensorFlow.js backend could start (${skipped.join('; ')})`);
    selected = {
      choice: found,
      reason: skipped.length > 0 ? `first available (${skipped.join('; ')})` : 'first choice',
    };
  }
  current = selected;
  log(`edgerl: tfjs backend ${selected.choice} (${selected.reason})`);
  return selected;
}

/** The backend chosen by `selectBackend`, if any. */
export function selectedBackend(): SelectedBackend | undefined {
  return current;
}

/** Returns undefined on success, else a short reason. */
async function activate(choice: BackendChoice): Promise<string | undefined> {
  const spec: BackendSpec = backendChoices[choice];
  if (spec.packageName !== null) {
    try {
      // A computed specifier keeps bundlers and tsc from requiring the optional packages.
      const specifier: string = spec.packageName;
      await import(specifier);
    } catch (error) {
      const code = (error as { code?: string }).code;
      return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
        ? `${spec.packageName} is not installed`
        : `${spec.packageName} failed to load (${(error as Error).message.split('\n')[0]})`;
    }
  }
  try {
    if (!(await tf.setBackend(spec.tfName))) return `tf.setBackend('${spec.tfName}') failed`;
    await tf.ready();
  } catch (error) {
    return `tf.setBackend('${spec.tfName}') threw: ${(error as Error).message.split('\n')[0]}`;
  }
  spec.setup?.();
  return undefined;
}
