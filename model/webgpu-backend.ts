// Starts TensorFlow.js's webgpu backend in Node over Dawn's Node bindings (npm `webgpu`, Vulkan on
// Linux; no CUDA toolkit). Both packages are optional dependencies, imported on demand; when one is
// missing, or Dawn finds no adapter, or only a software one that was not asked for, this says why in
// one line instead of throwing. Leaves out choosing among backends (backend.ts).
//
// Facts this relies on (feasibility notes §11, checked with webgpu@0.6.2 and tfjs 4.22.0):
// - tfjs-backend-webgpu checks `navigator.gpu` when it is imported and when a backend is built, so it
//   is defined first: on Node's own `navigator` (since Node 21) as a property, since its properties are
//   getters; a runtime without one gets a plain object.
// - Its own factory asks for an adapter again, so this file registers one that reuses the adapter it
//   checked: the backend then runs on exactly the adapter that was printed.
// - dataSync()/arraySync() throw there (they need OffscreenCanvas): the runtime reads with data().
import * as tf from '@tensorflow/tfjs';
import { registerGroupedAddN } from './webgpu-add-n.ts';
import {
  type AdapterInfoLike,
  type AdapterLimitsLike,
  describeAdapter,
  summarizeAdapter,
  type WebgpuAdapterSummary,
} from './webgpu-adapter.ts';
import { vulkanDriverManifests } from './webgpu-vulkan-drivers.ts';
import { errorMessage } from '../protocol/error-message.ts';

/** The pinned optional dependencies (package.json optionalDependencies). */
export const webgpuPackages = { dawn: 'webgpu@0.6.2', tfjs: '@tensorflow/tfjs-backend-webgpu@4.22.0' };

/** The slice of the WebGPU API used here, typed locally so tsc needs no @webgpu/types. */
interface GpuLike {
  requestAdapter(options?: {
    powerPreference?: 'high-performance' | 'low-power';
  }): Promise<AdapterLike | null>;
}
interface AdapterLike {
  readonly info: AdapterInfoLike;
  readonly limits: AdapterLimitsLike & Readonly<Record<string, number>>;
  requestDevice(descriptor: { requiredLimits: Record<string, number> }): Promise<DeviceLike>;
}
interface DeviceLike {
  readonly limits: Readonly<Record<string, number>>;
  readonly lost: Promise<{ reason: string; message: string }>;
  addEventListener(type: 'uncapturederror', listener: (event: { error: { message: string } }) => void): void;
  destroy(): void;
}
interface DawnModule {
  create(options: string[]): GpuLike;
  globals: Record<string, unknown>;
}
interface TfjsWebgpuModule {
  WebGPUBackend: new (device: DeviceLike, adapterInfo?: AdapterInfoLike) => tf.KernelBackend;
}

export type WebgpuActivation =
  | { readonly ok: true; readonly adapter: WebgpuAdapterSummary; readonly description: string }
  | { readonly ok: false; readonly reason: string };

/** Limits the backend asks for at the adapter's maximum: the WebGPU defaults (128 MiB bindings,
 * 256 MiB buffers) are smaller than a 0.5B model's embedding (151936 × 896 floats = 519 MiB). */
const raisedLimits = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeWorkgroupsPerDimension',
  'maxComputeWorkgroupSizeX',
  'maxComputeInvocationsPerWorkgroup',
  'maxStorageBuffersPerShaderStage',
] as const;

let started: { adapter: WebgpuAdapterSummary; description: string } | undefined;

/** The adapter the webgpu backend runs on, once started. */
export function webgpuAdapter(): WebgpuAdapterSummary | undefined {
  return started?.adapter;
}

/**
 * Makes `webgpu` the active tfjs backend. A software adapter (lavapipe, SwiftShader) is refused unless
 * `allowSoftware`. `log` receives device-lost and uncaptured-error lines (validation errors would
 * otherwise only show as wrong numbers).
 */
export async function activateWebgpu(options: {
  allowSoftware: boolean;
  log: (line: string) => void;
}): Promise<WebgpuActivation> {
  if (started) {
    if (started.adapter.software && !options.allowSoftware) {
      return { ok: false, reason: `webgpu already runs on a software adapter (${started.description})` };
    }
    if (!(await tf.setBackend('webgpu'))) return { ok: false, reason: "tf.setBackend('webgpu') failed" };
    return { ok: true, ...started };
  }

  // The Vulkan loader inside this process reads process.env, so the check reads the same.
  if (process.platform === 'linux' && vulkanDriverManifests(process.env).length === 0) {
    return {
      ok: false,
      reason:
        'no Vulkan driver is installed (no ICD manifest in /usr/share/vulkan/icd.d or /etc/vulkan/icd.d: install the GPU vendor’s Vulkan driver and libvulkan1)',
    };
  }
  const dawn = await importOptional<DawnModule>('webgpu', webgpuPackages.dawn);
  if (!dawn.ok) return dawn;
  let gpu: GpuLike;
  try {
    gpu = dawn.module.create([]);
  } catch (error) {
    return { ok: false, reason: `Dawn could not start (${firstLine(error)})` };
  }
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null);
  if (!adapter) {
    return {
      ok: false,
      reason:
        'Dawn found no WebGPU adapter (no Vulkan driver? install libvulkan1 and the GPU vendor’s Vulkan driver, or point VK_ICD_FILENAMES at its ICD json)',
    };
  }
  const summary = summarizeAdapter(adapter.info, adapter.limits);
  const description = describeAdapter(summary);
  if (summary.software && !options.allowSoftware) {
    return {
      ok: false,
      reason: `only a software adapter is available (${description}), used only when requested as webgpu:software`,
    };
  }

  const backendModule = await importOptional<TfjsWebgpuModule>(
    '@tensorflow/tfjs-backend-webgpu',
    webgpuPackages.tfjs,
    () => installGlobals(dawn.module.globals, gpu),
  );
  if (!backendModule.ok) return backendModule;
  let device: DeviceLike;
  try {
    const requiredLimits: Record<string, number> = {};
    for (const name of raisedLimits) {
      const value = adapter.limits[name];
      if (typeof value === 'number') requiredLimits[name] = value;
    }
    device = await adapter.requestDevice({ requiredLimits });
  } catch (error) {
    return { ok: false, reason: `the adapter refused a device (${firstLine(error)})` };
  }
  watchDevice(device, options.log);

  // Replace the package's factory (registered at import, it would pick its own adapter) with one that
  // builds the backend on the device made above.
  if (tf.findBackendFactory('webgpu')) tf.removeBackend('webgpu');
  const { WebGPUBackend } = backendModule.module;
  // One binding is the output; WebGPU guarantees at least 8 storage buffers per stage.
  registerGroupedAddN((device.limits.maxStorageBuffersPerShaderStage ?? 8) - 1);
  tf.registerBackend('webgpu', () => new WebGPUBackend(device, adapter.info), 3);
  try {
    if (!(await tf.setBackend('webgpu'))) {
      device.destroy();
      return { ok: false, reason: "tf.setBackend('webgpu') failed" };
    }
  } catch (error) {
    device.destroy();
    return { ok: false, reason: `tf.setBackend('webgpu') threw: ${firstLine(error)}` };
  }
  started = { adapter: summary, description };
  return { ok: true, ...started };
}

async function importOptional<T>(
  specifier: string,
  pinned: string,
  before?: () => void,
): Promise<{ ok: true; module: T } | { ok: false; reason: string }> {
  before?.();
  try {
    // A computed specifier keeps tsc and bundlers from requiring the optional package.
    const name: string = specifier;
    return { ok: true, module: (await import(name)) as T };
  } catch (error) {
    const code = (error as { code?: string }).code;
    return {
      ok: false,
      reason:
        code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
          ? `${specifier} is not installed (optional dependency: npm install --save-exact ${pinned})`
          : `${specifier} failed to load (${firstLine(error)})`,
    };
  }
}

/** Dawn's GPUBufferUsage, GPUMapMode, … constants (tfjs reads them as globals) and navigator.gpu. */
function installGlobals(globals: Record<string, unknown>, gpu: GpuLike): void {
  const target = globalThis as Record<string, unknown>;
  for (const [name, value] of Object.entries(globals)) if (!(name in target)) target[name] = value;
  const navigator = target.navigator as object | undefined;
  if (navigator === undefined) {
    Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
  } else if ((navigator as { gpu?: unknown }).gpu === undefined) {
    Object.defineProperty(navigator, 'gpu', { value: gpu, configurable: true, writable: true });
  }
}

function watchDevice(device: DeviceLike, log: (line: string) => void): void {
  const seen = new Set<string>();
  device.addEventListener('uncapturederror', (event) => {
    const message = event.error.message.split('\n')[0] ?? '';
    if (seen.has(message) || seen.size >= 20) return; // one line per distinct error
    seen.add(message);
    log(`edgerl: webgpu error (results of this call are not valid): ${message}`);
  });
  void device.lost.then((info) => {
    started = undefined;
    if (info.reason !== 'destroyed') log(`edgerl: webgpu device lost (${info.reason}): ${info.message}`);
  });
}

function firstLine(error: unknown): string {
  return errorMessage(error).split('\n')[0] ?? '';
}
