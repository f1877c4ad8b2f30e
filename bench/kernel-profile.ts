// Per-kernel time of one call, from tfjs's own profiler (tf.profile): every kernel the engine runs
// (forward, the gradient tape's backward, the optimiser) with its wall time. On wasm and cpu a kernel
// runs synchronously, so its time is its cost; on webgpu it is the GPU timer where the adapter has one.
// What the kernels do not cover (the gradient tape's bookkeeping, tidy, host-side set-up) is the call's
// wall time less their sum, printed as "outside kernels".
import * as tf from '@tensorflow/tfjs';

export interface KernelTotal {
  /** Kernel name, or name plus input shapes when grouped by shape. */
  readonly key: string;
  readonly calls: number;
  readonly ms: number;
}

export interface KernelProfile {
  readonly wallMs: number;
  readonly kernelMs: number;
  readonly byName: readonly KernelTotal[];
  readonly byShape: readonly KernelTotal[];
}

function totals(entries: readonly { key: string; ms: number }[]): KernelTotal[] {
  const map = new Map<string, { calls: number; ms: number }>();
  for (const { key, ms } of entries) {
    const entry = map.get(key) ?? { calls: 0, ms: 0 };
    entry.calls += 1;
    entry.ms += ms;
    map.set(key, entry);
  }
  return [...map.entries()].map(([key, v]) => ({ key, ...v })).sort((a, b) => b.ms - a.ms);
}

/** Runs `query` once under tf.profile and sums its kernels' times by name and by name + input shapes. */
export async function profileKernels(query: () => Promise<unknown>): Promise<KernelProfile> {
  const started = performance.now();
  const info = await tf.profile(async () => {
    await query();
    return [];
  });
  const wallMs = performance.now() - started;
  const kernels = info.kernels.map((kernel) => ({
    name: kernel.name,
    shapes: kernel.inputShapes.map((shape) => (shape ? `[${shape.join(',')}]` : '-')).join(' '),
    ms: typeof kernel.kernelTimeMs === 'number' ? kernel.kernelTimeMs : 0,
  }));
  return {
    wallMs,
    kernelMs: kernels.reduce((sum, kernel) => sum + kernel.ms, 0),
    byName: totals(kernels.map((kernel) => ({ key: kernel.name, ms: kernel.ms }))),
    byShape: totals(kernels.map((kernel) => ({ key: `${kernel.name} ${kernel.shapes}`, ms: kernel.ms }))),
  };
}

/** The top `count` kernels by name and by shape, as printable lines. */
export function formatKernelProfile(title: string, profile: KernelProfile, count = 10): string[] {
  const share = (ms: number) => `${((100 * ms) / profile.wallMs).toFixed(1).padStart(5)} %`;
  const row = (total: KernelTotal) =>
    `  ${total.ms.toFixed(1).padStart(8)} ms ${share(total.ms)} ${String(total.calls).padStart(6)}×  ${total.key}`;
  const calls = profile.byName.reduce((sum, total) => sum + total.calls, 0);
  const outside = profile.wallMs - profile.kernelMs;
  return [
    `${title}: ${profile.wallMs.toFixed(1)} ms wall, ${profile.kernelMs.toFixed(1)} ms in ${calls} kernels, ` +
      `${outside.toFixed(1)} ms (${((100 * outside) / profile.wallMs).toFixed(1)} %) outside kernels`,
    '  by kernel:',
    ...profile.byName.slice(0, count).map(row),
    '  by kernel and input shapes:',
    ...profile.byShape.slice(0, count).map(row),
  ];
}
