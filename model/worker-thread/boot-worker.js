// A worker thread's first module (model/worker-thread/worker-thread.ts starts it). A worker thread
// starts with a fresh module loader, without the tsx hooks bin/edgerl.js registers (or vitest's
// transform), so it registers tsx itself and then imports the TypeScript entry named in workerData:
// the same code runs under the CLI, tests and benches. The trainer's gradient workers and
// serve-model's decode workers both start here.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
