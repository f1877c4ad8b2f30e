// tf.addN on webgpu for any number of inputs. tfjs-backend-webgpu 4.22.0's AddN binds every input as a
// storage buffer in one shader, so with more inputs than the device's maxStorageBuffersPerShaderStage − 1
// (7 at WebGPU's default limit, 15 on lavapipe) the pipeline is invalid and the result is garbage; the
// trainer's global gradient norm sums one term per adapter tensor (336 for all 7 projections of a
// 24-layer model). This sums in groups that fit, as that package's own Concat kernel does.
import * as tf from '@tensorflow/tfjs';

let installed = false;

/** Wraps the registered webgpu AddN kernel once; `maxInputs` is the largest group one shader may sum. */
export function registerGroupedAddN(maxInputs: number): void {
  if (installed) return;
  if (!Number.isInteger(maxInputs) || maxInputs < 2) {
    throw new RangeError(`registerGroupedAddN: maxInputs must be an integer >= 2, got ${maxInputs}`);
  }
  const original = tf.getKernel('AddN', 'webgpu');
  if (!original) return;
  installed = true;
  const sum = original.kernelFunc;
  tf.unregisterKernel('AddN', 'webgpu');
  tf.registerKernel({
    kernelName: 'AddN',
    backendName: 'webgpu',
    kernelFunc: (args) => {
      // tfjs passes AddN's inputs as an array (typed as a name → tensor map).
      let level = args.inputs as unknown as tf.TensorInfo[];
      const partials: tf.TensorInfo[] = [];
      while (level.length > maxInputs) {
        const next: tf.TensorInfo[] = [];
        for (let begin = 0; begin < level.length; begin += maxInputs) {
          const group = level.slice(begin, begin + maxInputs);
          if (group.length === 1) {
            next.push(group[0] as tf.TensorInfo);
            continue;
          }
          const partial = sum({
            ...args,
            inputs: group as unknown as tf.NamedTensorInfoMap,
          }) as tf.TensorInfo;
          partials.push(partial);
          next.push(partial);
        }
        level = next;
      }
      const result = sum({ ...args, inputs: level as unknown as tf.NamedTensorInfoMap });
      // The backend defers freeing buffers that queued commands still read.
      const backend = args.backend as tf.KernelBackend;
      for (const partial of partials) backend.disposeData(partial.dataId);
      return result;
    },
  });
}
