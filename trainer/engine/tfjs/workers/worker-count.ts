// How many data-parallel gradient workers a trainer starts by default, per backend. The wasm backend
// computes on one thread under Node (its multithreaded build is switched off there: tfjs #3830,
// research/feasibility.md §10.3) and plain cpu is single-threaded JavaScript, so one worker per core
// uses the machine. libtensorflow (node, node-gpu) already runs its own thread pool, and a GPU adapter
// is one device: one worker there (more GPU adapters would each take one; edgerl opens one).
import { availableParallelism } from 'node:os';
import type { BackendChoice } from '../../../../model/backend-names.ts';

type Parallelism = 'per-core' | 'one';

const backendParallelism = {
  wasm: 'per-core',
  cpu: 'per-core',
  node: 'one',
  'node-gpu': 'one',
  webgpu: 'one',
  'webgpu:software': 'one',
} as const satisfies Record<BackendChoice, Parallelism>;

/** The default worker count for `backend`: the cores on single-threaded CPU backends, else 1. */
export function defaultWorkerCount(backend: BackendChoice, cores = availableParallelism()): number {
  const parallelism: Parallelism = backendParallelism[backend];
  return parallelism === 'per-core' ? Math.max(1, cores) : 1;
}

/** `requested` (a flag) wins; null takes the backend's default; no backend selected yet means 1. */
export function resolveWorkerCount(requested: number | null, backend: BackendChoice | undefined): number {
  if (requested !== null) return requested;
  return backend ? defaultWorkerCount(backend) : 1;
}
