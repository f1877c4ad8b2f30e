// A gradient worker thread's first module. A worker thread starts with a fresh module loader, without
// the tsx hooks bin/edgerl.js registers (or vitest's transform), so it registers tsx itself and then
// imports the TypeScript entry named in workerData: the same code runs under the CLI, tests and benches.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
