// The Cloudflare Workers entry (wrangler.toml's main) for the shipped environments: createWorker's
// handlers (edge/runtime/create-worker.ts, where what they do is described). The module exports only
// its handlers (and types): workerd reads every named export as an entrypoint. A Worker with your own
// environments has its own entry: `export default createWorker({ environments })` (docs/workers.md).
import { createWorker } from './create-worker.ts';

export type { WorkerEnv } from './create-worker.ts';

export default createWorker();
