// A decode worker thread of serve-model (worker-decode-runtime.ts starts it): its own TensorFlow.js
// backend, its own copy of the model and of every loaded adapter, and one decode batch holding the
// rows assigned to it, whose key/value cache never leaves this thread. It runs the same
// LocalDecodeRuntime as a serve-model without workers, one request at a time in arrival order.
import { workerData } from 'node:worker_threads';
import { selectBackend } from '../../model/backend.ts';
import { loadModel } from '../../model/policy-model.ts';
import { answerRequests, failStart } from '../../model/worker-thread/thread-side.ts';
import { LocalDecodeRuntime } from '../decode-runtime.ts';
import type { DecodeRequest, DecodeWorkerStart } from './decode-worker-protocol.ts';

const start = workerData as DecodeWorkerStart;

let runtime: LocalDecodeRuntime;
try {
  await selectBackend({ requested: start.backend, log: () => {} });
  runtime = new LocalDecodeRuntime(await loadModel(start.modelDir));
} catch (error) {
  failStart(error, `could not load the model from ${start.modelDir}`);
}

/** The logits as their own buffer, so they move to the main thread without a copy. */
function moved(logits: Float32Array) {
  const own = logits.slice();
  return { reply: { logits: own }, transfer: [own.buffer as ArrayBuffer] };
}

answerRequests<DecodeRequest>(async (request) => {
  switch (request.kind) {
    case 'load-adapter':
      await runtime.loadAdapter(request.key, request.path);
      return {};
    case 'remove-adapter':
      runtime.removeAdapter(request.key);
      return {};
    case 'add':
      return moved(await runtime.add(request.rows));
    case 'prompt-logits':
      return moved(await runtime.promptLogits(request.row));
    case 'step':
      return moved(await runtime.step(request.tokens));
    case 'retain':
      runtime.retain(request.rows);
      return {};
  }
});
