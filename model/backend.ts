// Picks the TensorFlow.js backend at run time, first available of: @tensorflow/tfjs-node-gpu (CUDA
// through libtensorflow) → webgpu on a hardware adapter (Dawn over Vulkan) → @tensorflow/tfjs-node
// (libtensorflow on CPU) → the bundled wasm backend → plain JS cpu. All but wasm and cpu are optional
// packages imported on demand (tfjs-node downloads libtensorflow 2.9.1 at install time, which an
// offline machine cannot do; see README "GPU backends"), so a missing one is a one-line reason.
// A software WebGPU adapter (lavapipe, SwiftShader) is used only when asked for as `webgpu:software`.
import * as tf from '@tensorflow/tfjs';
import { registerTransposeFreeMatMulGradient } from './matmul-gradient.ts';
import { registerWasmBatchMatMul } from './wasm-batch-matmul.ts';
import { registerWasmMemoryKernels } from './wasm-memory-kernels.ts';
import { activateWebgpu } from './webgpu-backend.ts';
import { errorMessage } from '../protocol/error-message.ts';
import { type BackendChoice, backendNames, backendPreference, isBackendChoice } from './backend-names.ts';

type Log = (line: string) => void;

/** What an activated backend runs on, or why it could not start. */
type Activation =
  | { readonly ok: true; readonly device: string; readonly hardwareGpu: boolean }
  | { readonly ok: false; readonly reason: string };

interface BackendSpec {
  /** Imports what the backend needs, makes it tfjs's active backend and says what it runs on. */
  readonly activate: (log: Log) => Promise<Activation>;
}

/** How each backend of backend-names.ts starts. */
const backendChoices = {
  'node-gpu': {
    activate: async () => {
      const failure = await importAndSet('@tensorflow/tfjs-node-gpu', 'tensorflow');
      if (failure) return { ok: false, reason: failure };
      // tfjs-node-gpu runs on the CPU when libtensorflow finds no CUDA device (missing CUDA 11.2 /
      // cuDNN 8.1 libraries, or no GPU): that is not what this choice promises.
      if ((tf.backend() as { isUsingGpuDevice?: boolean }).isUsingGpuDevice === false) {
        return {
          ok: false,
          reason:
            'libtensorflow found no CUDA GPU (it needs CUDA 11.2 and cuDNN 8.1 libraries on LD_LIBRARY_PATH)',
        };
      }
      return { ok: true, device: 'CUDA GPU through libtensorflow 2.9.1', hardwareGpu: true };
    },
  },
  webgpu: { activate: (log) => webgpu(false, log) },
  'webgpu:software': { activate: (log) => webgpu(true, log) },
  node: {
    activate: async () => {
      const failure = await importAndSet('@tensorflow/tfjs-node', 'tensorflow');
      return failure
        ? { ok: false, reason: failure }
        : { ok: true, device: 'CPU through libtensorflow 2.9.1', hardwareGpu: false };
    },
  },
  wasm: {
    activate: async () => {
      const failure = await importAndSet('@tensorflow/tfjs-backend-wasm', 'wasm');
      if (failure) return { ok: false, reason: failure };
      // Transposed matmuls are 14–67× slower on wasm (feasibility §10.3).
      registerTransposeFreeMatMulGradient();
      // Batched products (attention) through XNNPACK per batch entry instead of a scalar loop.
      registerWasmBatchMatMul();
      // Identity without a copy, row gathers without the generic strided loop.
      registerWasmMemoryKernels();
      return { ok: true, device: 'CPU (WebAssembly, one thread)', hardwareGpu: false };
    },
  },
  cpu: {
    activate: async () => {
      const failure = await importAndSet(null, 'cpu');
      return failure
        ? { ok: false, reason: failure }
        : { ok: true, device: 'CPU (plain JavaScript)', hardwareGpu: false };
    },
  },
} satisfies Record<BackendChoice, BackendSpec>;

export type BackendErrorCode = 'unknown-backend' | 'backend-unavailable';

export class BackendError extends Error {
  override readonly name = 'BackendError';
  constructor(
    readonly code: BackendErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface SelectedBackend {
  readonly choice: BackendChoice;
  /** Why this one: requested, or which earlier choices were unavailable. */
  readonly reason: string;
  /** What it computes on, e.g. the WebGPU adapter's name, vendor and architecture. */
  readonly device: string;
  /** True for CUDA and hardware WebGPU adapters; false for CPU backends and software adapters. */
  readonly hardwareGpu: boolean;
}

let current: SelectedBackend | undefined;

/**
 * Activates a backend and prints the choice and its device once (through `log`). `requested` (from a
 * flag or the EDGERL_BACKEND variable, read by the entry point) skips the search and fails if
 * unavailable.
 */
export async function selectBackend(
  options: { requested?: string; log?: Log } = {},
): Promise<SelectedBackend> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const requested = options.requested?.trim() || undefined;
  if (requested !== undefined && !isBackendChoice(requested)) {
    throw new BackendError(
      'unknown-backend',
      `unknown backend "${requested}"; choose one of ${backendNames.join(', ')}`,
    );
  }
  if (current && (requested === undefined || requested === current.choice)) return current;
  let selected: SelectedBackend;
  if (requested !== undefined) {
    const result = await activate(requested, log);
    if (!result.ok)
      throw new BackendError(
        'backend-unavailable',
        `backend "${requested}" is not available: ${result.reason}`,
      );
    selected = {
      choice: requested,
      reason: 'requested',
      device: result.device,
      hardwareGpu: result.hardwareGpu,
    };
  } else {
    const skipped: string[] = [];
    let found: { choice: BackendChoice; device: string; hardwareGpu: boolean } | undefined;
    for (const choice of backendPreference) {
      const result = await activate(choice, log);
      if (result.ok) {
        found = { choice, device: result.device, hardwareGpu: result.hardwareGpu };
        break;
      }
      skipped.push(`${choice}: ${result.reason}`);
    }
    if (!found)
      throw new BackendError(
        'backend-unavailable',
        `no TensorFlow.js backend could start (${skipped.join('; ')})`,
      );
    selected = {
      ...found,
      reason: skipped.length > 0 ? `first available; ${skipped.join('; ')}` : 'first choice',
    };
  }
  current = selected;
  log(`edgerl: tfjs backend ${selected.choice} on ${selected.device} (${selected.reason})`);
  return selected;
}

/** The backend chosen by `selectBackend`, if any. */
export function selectedBackend(): SelectedBackend | undefined {
  return current;
}

async function activate(choice: BackendChoice, log: Log): Promise<Activation> {
  const spec: BackendSpec = backendChoices[choice];
  try {
    const result = await spec.activate(log);
    if (result.ok) await tf.ready();
    return result;
  } catch (error) {
    return { ok: false, reason: `${choice} threw: ${firstLine(error)}` };
  }
}

async function webgpu(allowSoftware: boolean, log: Log): Promise<Activation> {
  const result = await activateWebgpu({ allowSoftware, log });
  return result.ok
    ? { ok: true, device: result.description, hardwareGpu: !result.adapter.software }
    : { ok: false, reason: result.reason };
}

/** Imports the package that provides a backend (if any) and activates it; returns a reason on failure. */
async function importAndSet(packageName: string | null, tfName: string): Promise<string | undefined> {
  if (packageName !== null) {
    try {
      // A computed specifier keeps bundlers and tsc from requiring the optional packages.
      const specifier: string = packageName;
      await import(specifier);
    } catch (error) {
      const code = (error as { code?: string }).code;
      return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
        ? `${packageName} is not installed`
        : `${packageName} failed to load (${firstLine(error)})`;
    }
  }
  try {
    if (!(await tf.setBackend(tfName))) return `tf.setBackend('${tfName}') failed`;
  } catch (error) {
    return `tf.setBackend('${tfName}') threw: ${firstLine(error)}`;
  }
  return undefined;
}

function firstLine(error: unknown): string {
  return errorMessage(error).split('\n')[0] ?? '';
}
