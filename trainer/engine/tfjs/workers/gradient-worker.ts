// A data-parallel gradient worker (a worker thread started by train-worker-pool.ts): its own
// TensorFlow.js backend, its own copy of the base model and of the adapter. Per step it loads the
// adapter's values from the shared buffer, computes its share's gradients with the same function the
// single-thread trainer uses (sequenceGradients), writes them into its slot and reports the loss sums.
// Steps run one at a time, in arrival order. It never updates the adapter: the coordinator does.
import { workerData } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { selectBackend } from '../../../../model/backend.ts';
import { loraVariables } from '../../../../model/lora.ts';
import { loadModel, PolicyModel } from '../../../../model/policy-model.ts';
import { answerRequests, failStart, postEvent } from '../../../../model/worker-thread/thread-side.ts';
import { sequenceGradients } from '../train-step.ts';
import type { AdapterLayout, Done, FromWorker, StepRequest, WorkerStart } from './worker-protocol.ts';

const start = workerData as WorkerStart;

async function openModel(): Promise<PolicyModel> {
  await selectBackend({ requested: start.backend, log: () => {} });
  const source = start.model;
  if (source.kind === 'dir') return loadModel(source.dir);
  return PolicyModel.fromHostWeights(
    source.config,
    new Map(source.tensors.map((tensor) => [tensor.name, { shape: tensor.shape, data: tensor.data }])),
  );
}

let model: PolicyModel;
try {
  model = await openModel();
} catch (error) {
  failStart(error, 'could not load the model');
}
let layoutKey: string | undefined;

/** Rebuilds the adapter when the coordinator's is another one, then loads its current values. */
function loadAdapter(name: string, layout: AdapterLayout, weights: Float32Array): void {
  if (layoutKey !== layout.key) {
    if (model.adapterNames().includes(name)) model.removeAdapter(name);
    const variables = loraVariables(model.addAdapter(name, layout.config));
    if (
      variables.length !== layout.shapes.length ||
      variables.some((variable, i) => !tf.util.arraysEqual(variable.shape, [...(layout.shapes[i] ?? [])]))
    ) {
      throw new Error(`adapter "${name}" does not have the coordinator's shapes`);
    }
    variables.forEach((variable, i) => {
      variable.trainable = layout.trainable[i] === true;
    });
    layoutKey = layout.key;
  }
  let offset = 0;
  tf.tidy(() => {
    for (const variable of loraVariables(model.adapter(name))) {
      // slice() copies out of the shared buffer: the cpu backend would otherwise keep a view of it.
      variable.assign(tf.tensor(weights.slice(offset, offset + variable.size), variable.shape));
      offset += variable.size;
    }
  });
}

async function step(request: StepRequest): Promise<Omit<Done, 'kind' | 'id'>> {
  const started = performance.now();
  loadAdapter(request.adapterName, request.adapter, request.weights);
  let reported = 0;
  const result = await sequenceGradients(
    model,
    request.adapterName,
    request.sequences,
    request.normaliser,
    request.options,
    (_done, _total, tokens) => {
      postEvent({ kind: 'micro-batch', id: request.id, tokens: tokens - reported } satisfies FromWorker);
      reported = tokens;
    },
  );
  try {
    let offset = 0;
    for (const grad of result.grads) {
      request.grads.set((await grad.data()) as Float32Array, offset);
      offset += grad.size;
    }
    if (offset !== request.grads.length) {
      throw new Error(`wrote ${offset} gradient values into a slot of ${request.grads.length}`);
    }
  } finally {
    tf.dispose(result.grads);
  }
  return {
    microBatches: result.microBatches,
    tokens: result.tokens,
    paddedTokens: result.paddedTokens,
    seconds: (performance.now() - started) / 1000,
  };
}

answerRequests<StepRequest>(async (request) => ({ reply: await step(request) }));
