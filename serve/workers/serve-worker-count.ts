// How many decode worker threads serve-model starts by default, per backend (`--workers`).
import type { BackendChoice } from '../../model/backend.ts';

/** The default for `backend`: 0 (decode in the main thread) until measured otherwise. */
export function defaultServeWorkers(_backend: BackendChoice): number {
  return 0;
}
