// The ceiling the model benches compare with: the backend's plain float32 matrix product, timed in
// the same run. n = 1024 on CPU backends (as before); on a hardware GPU also n = 4096, because a
// 1024² product (2 GFLOP) is too small to keep a large GPU busy, and the larger rate is the ceiling.
import * as tf from '@tensorflow/tfjs';
import type { SelectedBackend } from '../model/backend.ts';

export interface MatmulRate {
  readonly n: number;
  readonly ms: number;
  readonly gflops: number;
  /** The same per this process's CPU time (user + system): on a shared machine, the rate while it ran. */
  readonly cpuMs: number;
  readonly cpuGflops: number;
}

/** Wall and process CPU milliseconds of one call, averaged; see timeTensorOp. */
export async function timeTensorOpWithCpu(
  fn: () => tf.Tensor | tf.Tensor[],
  minMs: number,
): Promise<{ ms: number; cpuMs: number }> {
  const first = fn(); // warm-up: shader compilation, kernel setup, first allocations
  await (Array.isArray(first) ? first[0] : first)?.data();
  tf.dispose(first);
  let runs = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  do {
    const out = fn();
    await (Array.isArray(out) ? out[0] : out)?.data(); // async read: waits for the device to finish
    tf.dispose(out);
    runs += 1;
  } while (performance.now() - start < minMs);
  const used = process.cpuUsage(cpu);
  return { ms: (performance.now() - start) / runs, cpuMs: (used.user + used.system) / 1000 / runs };
}

/** Mean time of `fn` over at least `minMs` after one warm-up call, waiting for each result. */
export async function timeTensorOp(fn: () => tf.Tensor | tf.Tensor[], minMs: number): Promise<number> {
  return (await timeTensorOpWithCpu(fn, minMs)).ms;
}

/** The backend's n×n float32 matmul rate, timed for at least `minMs`. */
export async function matmulRate(n: number, minMs: number): Promise<MatmulRate> {
  const a = tf.randomNormal([n, n]);
  const b = tf.randomNormal([n, n]);
  const { ms, cpuMs } = await timeTensorOpWithCpu(() => tf.matMul(a, b), minMs);
  tf.dispose([a, b]);
  const flops = 2 * n ** 3;
  return { n, ms, gflops: flops / (ms / 1000) / 1e9, cpuMs, cpuGflops: flops / (cpuMs / 1000) / 1e9 };
}

/** Measures and prints the ceiling; returns the best rate. */
export async function matmulCeiling(backend: SelectedBackend): Promise<MatmulRate> {
  const sizes = backend.hardwareGpu ? [1024, 4096] : [1024];
  let best: MatmulRate | undefined;
  for (const n of sizes) {
    const measured = await matmulRate(n, 2000);
    console.log(
      `backend ${backend.choice}: plain ${n}×${n} matmul ${measured.ms.toFixed(2)} ms → ${measured.gflops.toFixed(2)} GFLOP/s`,
    );
    if (!best || measured.gflops > best.gflops) best = measured;
  }
  const ceiling = best as MatmulRate;
  console.log(`ceiling: ${ceiling.gflops.toFixed(2)} GFLOP/s (${ceiling.n}×${ceiling.n})`);
  return ceiling;
}
