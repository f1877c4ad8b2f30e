// How many data-parallel gradient workers a trainer starts by default, per backend: one per core on
// the backends that compute on one thread (model/backend-threads.ts), so the machine is used; one
// elsewhere (libtensorflow runs its own thread pool; a GPU adapter is one device: more GPU adapters
// would each take one; edgerl opens one).
import { availableParallelism } from 'node:os';
import type { BackendChoice } from '../../../model/backend.ts';
import { computesOnOneThread } from '../../../model/backend-threads.ts';

/** The default worker count for `backend`: the cores on single-threaded CPU backends, else 1. */
export function defaultWorkerCount(backend: BackendChoice, cores = availableParallelism()): number {
  return computesOnOneThread(backend) ? Math.max(1, cores) : 1;
}

/** `requested` (a flag) wins; null takes the backend's default; no backend selected yet means 1. */
export function resolveWorkerCount(requested: number | null, backend: BackendChoice | undefined): number {
  if (requested !== null) return requested;
  return backend ? defaultWorkerCount(backend) : 1;
}
