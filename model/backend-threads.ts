// Which TensorFlow.js backends compute on one thread under Node, so that worker threads (each with
// its own backend) are the only way to use more cores. The wasm backend's multithreaded build is
// switched off under Node (tfjs #3830, research/feasibility.md §10.3) and plain cpu is
// single-threaded JavaScript. libtensorflow (node, node-gpu) already runs its own thread pool, and a
// GPU adapter is one device. The trainer's gradient workers and serve-model's decode workers both
// size their defaults from this.
import type { BackendChoice } from './backend.ts';

const singleThreadedBackends = {
  wasm: true,
  cpu: true,
  node: false,
  'node-gpu': false,
  webgpu: false,
  'webgpu:software': false,
} as const satisfies Record<BackendChoice, boolean>;

/** True where `backend` computes on the calling thread alone (wasm, cpu). */
export function computesOnOneThread(backend: BackendChoice): boolean {
  return singleThreadedBackends[backend];
}
