// What a WebGPU adapter is, in the terms the backend line prints: vendor, architecture, device, its
// buffer limits, and whether it is a software (CPU) implementation. Pure: takes the adapter's info
// and limits as Dawn reports them, returns values. Leaves out requesting the adapter (webgpu-backend.ts).

/** The fields of a GPUAdapterInfo this file reads (WebGPU spec §GPUAdapterInfo; all optional so a
 * binding that omits one still works). */
export interface AdapterInfoLike {
  readonly vendor?: string;
  readonly architecture?: string;
  readonly device?: string;
  readonly description?: string;
  /** Set by Dawn for CPU adapters such as lavapipe and SwiftShader. */
  readonly isFallbackAdapter?: boolean;
}

export interface AdapterLimitsLike {
  readonly maxBufferSize: number;
  readonly maxStorageBufferBindingSize: number;
}

export interface WebgpuAdapterSummary {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  readonly description: string;
  /** A CPU implementation of WebGPU: correct, but slower than the wasm backend for real work. */
  readonly software: boolean;
  /** Which signal marked it as software (empty for hardware). */
  readonly softwareSignal: string;
  /** Largest tensor, in bytes, one kernel can bind: bigger weights fail validation on this adapter. */
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
}

/** Names of CPU implementations of Vulkan/D3D/WebGPU: Mesa's llvmpipe/lavapipe/softpipe, Google's
 * SwiftShader, Microsoft's WARP ("Basic Render Driver"). */
const softwareNames = /llvmpipe|lavapipe|softpipe|swiftshader|basic render driver|\bwarp\b/i;

export function summarizeAdapter(info: AdapterInfoLike, limits: AdapterLimitsLike): WebgpuAdapterSummary {
  const vendor = info.vendor ?? '';
  const architecture = info.architecture ?? '';
  const device = info.device ?? '';
  const description = info.description ?? '';
  const named = `${device} ${description}`.match(softwareNames)?.[0];
  const softwareSignal =
    info.isFallbackAdapter === true
      ? 'fallback adapter'
      : architecture.toLowerCase() === 'software'
        ? 'architecture "software"'
        : named
          ? `device "${named}"`
          : '';
  return {
    vendor,
    architecture,
    device,
    description,
    software: softwareSignal !== '',
    softwareSignal,
    maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
    maxBufferSize: limits.maxBufferSize,
  };
}

/** 134217728 → "128 MiB", 4294967295 → "4.0 GiB". */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
  return `${Math.round(bytes / 2 ** 20)} MiB`;
}

/** One line: `llvmpipe: Mesa 25.0.7 (LLVM 15.0.6) [mesa/software, software (fallback adapter), binding ≤ 128 MiB]`. */
export function describeAdapter(summary: WebgpuAdapterSummary): string {
  const name = summary.description || summary.device || 'unnamed adapter';
  const kind = summary.software ? `software (${summary.softwareSignal})` : 'hardware';
  const maker = [summary.vendor, summary.architecture].filter((part) => part !== '').join('/');
  // Commas only: the line lands inside backend.ts's `;`-separated list of skipped backends.
  return `${name} [${maker ? `${maker}, ` : ''}${kind}, binding ≤ ${formatBytes(summary.maxStorageBufferBindingSize)}]`;
}
