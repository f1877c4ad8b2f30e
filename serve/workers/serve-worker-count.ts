// How many decode worker threads serve-model starts by default (`--workers`), per backend. Where the
// backend computes on one thread (wasm, cpu: model/backend-threads.ts), one worker: the forward
// passes leave the main thread, which meanwhile serves HTTP (and, in the demo, the edge and the
// store); `npm run bench:serve` measured 1 worker at 1.1–1.4× the main thread's tokens/s from 8
// concurrent requests up and about even alone, and one per core no faster than one (0.86–1.02×)
// on the shared 2-core machine (docs/inference-endpoint.md#decode-workers). Elsewhere none:
// libtensorflow has its own thread pool, and a GPU is one device the main thread already drives.
import type { BackendChoice } from '../../model/backend.ts';
import { computesOnOneThread } from '../../model/backend-threads.ts';

/** The default for `backend`: 1 on single-threaded CPU backends, else 0 (decode in the main thread). */
export function defaultServeWorkers(backend: BackendChoice): number {
  return computesOnOneThread(backend) ? 1 : 0;
}
