// Batched matrix products on the wasm backend at XNNPACK's speed. tfjs-backend-wasm 4.22 sends a
// product to XNNPACK's fully-connected operator only when both operands have batch 1; every batched
// one (attention's scores and mixes, [B, K, G·T, hd] · [B, K, hd, S]) goes to a scalar blocked loop
// at ≈ 2 GFLOP/s against ≈ 25–30 for XNNPACK (the kernel is tfjs-backend-wasm's
// src/cc/batch_mat_mul_impl.cc; measured by `npm run bench:train -- --profile`). This replaces the
// wasm BatchMatMul kernel with one that runs each batch entry through that same batch-1 XNNPACK entry
// point, on views of the operands: three tensor ids registered for the entry's slices of A, B and the
// output (registration only maps an id to heap memory; disposing the id frees nothing but the id and
// the XNNPACK operator cached on it, backend.cc's register_tensor / dispose_data). Transposed and
// broadcast products, and anything not float32, go to the stock kernel unchanged.
//
// It leans on the wasm backend's internals (dataIdMap, dataIdNextNumber, wasm.tfjs.registerTensor,
// the exported BatchMatMul function): `installable` checks they are there, so a tfjs upgrade that
// moves them leaves the stock kernel in place instead of failing.
import * as tf from '@tensorflow/tfjs';

type TensorInfo = { dataId: object; shape: number[]; dtype: tf.DataType };

interface WasmModule {
  cwrap(name: string, returnType: null, argTypes: string[]): (...args: unknown[]) => void;
  tfjs: { registerTensor(id: number, size: number, offset: number): void; disposeData(id: number): void };
}

interface WasmBackend {
  wasm: WasmModule;
  dataIdMap: { get(dataId: object): { id: number; memoryOffset: number } | undefined };
  dataIdNextNumber: number;
  makeOutput(shape: number[], dtype: tf.DataType): TensorInfo;
}

type BatchMatMulFn = (
  aId: number,
  aShape: Uint8Array,
  aRank: number,
  bId: number,
  bShape: Uint8Array,
  bRank: number,
  transposeA: boolean,
  transposeB: boolean,
  outId: number,
) => void;

const wrapped = new WeakMap<WasmModule, BatchMatMulFn>();

function batchMatMulFn(backend: WasmBackend): BatchMatMulFn {
  let fn = wrapped.get(backend.wasm);
  if (!fn) {
    // The same signature tfjs-backend-wasm's kernels/BatchMatMul.ts wraps.
    fn = backend.wasm.cwrap('BatchMatMul', null, [
      'number',
      'array',
      'number',
      'number',
      'array',
      'number',
      'number',
      'number',
      'number',
    ]) as BatchMatMulFn;
    wrapped.set(backend.wasm, fn);
  }
  return fn;
}

function installable(backend: unknown): backend is WasmBackend {
  const b = backend as Partial<WasmBackend> | null;
  return (
    b !== null &&
    typeof b === 'object' &&
    typeof b.dataIdNextNumber === 'number' &&
    typeof b.makeOutput === 'function' &&
    typeof b.dataIdMap?.get === 'function' &&
    typeof b.wasm?.cwrap === 'function' &&
    typeof b.wasm?.tfjs?.registerTensor === 'function' &&
    typeof b.wasm?.tfjs?.disposeData === 'function'
  );
}

const shapeBytes = (shape: number[]) => new Uint8Array(new Int32Array(shape).buffer);

/**
 * a [..., m, k] · b [..., k, n] with equal leading dimensions (or one side without them), each batch
 * entry through XNNPACK. Returns null when the stock kernel should run instead.
 */
function perEntryMatMul(
  a: TensorInfo,
  b: TensorInfo,
  attrs: { transposeA: boolean; transposeB: boolean },
  backend: WasmBackend,
): TensorInfo | null {
  if (attrs.transposeA || attrs.transposeB || a.dtype !== 'float32' || b.dtype !== 'float32') return null;
  if (a.shape.length < 3 && b.shape.length < 3) return null; // plain 2-D: already XNNPACK
  const [m, k] = a.shape.slice(-2) as [number, number];
  const [kb, n] = b.shape.slice(-2) as [number, number];
  if (k !== kb) return null; // let the stock kernel report the mismatch
  const outerA = a.shape.slice(0, -2);
  const outerB = b.shape.slice(0, -2);
  const batchA = outerA.reduce((x, y) => x * y, 1);
  const batchB = outerB.reduce((x, y) => x * y, 1);
  const sameOuter = outerA.length === outerB.length && outerA.every((d, i) => d === outerB[i]);
  if (!sameOuter && batchA !== 1 && batchB !== 1) return null; // general broadcasting: stock kernel
  const outer = batchA >= batchB ? outerA : outerB;
  const batch = Math.max(batchA, batchB);
  if (batch <= 1 || m === 0 || n === 0 || k === 0) return null;
  const out = backend.makeOutput([...outer, m, n], 'float32');
  const aInfo = backend.dataIdMap.get(a.dataId);
  const bInfo = backend.dataIdMap.get(b.dataId);
  const outInfo = backend.dataIdMap.get(out.dataId);
  if (!aInfo || !bInfo || !outInfo) throw new Error('wasm BatchMatMul: operand not on the wasm backend');
  const run = batchMatMulFn(backend);
  const { registerTensor, disposeData } = backend.wasm.tfjs;
  const aShape = shapeBytes([1, m, k]);
  const bShape = shapeBytes([1, k, n]);
  for (let entry = 0; entry < batch; entry++) {
    const aId = backend.dataIdNextNumber++;
    const bId = backend.dataIdNextNumber++;
    const outId = backend.dataIdNextNumber++;
    registerTensor(aId, m * k, aInfo.memoryOffset + (batchA === 1 ? 0 : entry * m * k * 4));
    registerTensor(bId, k * n, bInfo.memoryOffset + (batchB === 1 ? 0 : entry * k * n * 4));
    registerTensor(outId, m * n, outInfo.memoryOffset + entry * m * n * 4);
    run(aId, aShape, 3, bId, bShape, 3, false, false, outId);
    disposeData(aId);
    disposeData(bId); // also deletes the XNNPACK operator cached on this B
    disposeData(outId);
  }
  return out;
}

let registered = false;

/**
 * Installs the per-entry kernel for the wasm backend (once per process); call it with wasm active.
 * Returns false, leaving the stock kernel, when the backend's internals are not as expected.
 */
export function registerWasmBatchMatMul(): boolean {
  if (registered) return true;
  const stock = tf.getKernel('BatchMatMul', 'wasm');
  if (!stock || !installable(tf.findBackend('wasm'))) return false;
  registered = true;
  tf.unregisterKernel('BatchMatMul', 'wasm');
  tf.registerKernel({
    kernelName: 'BatchMatMul',
    backendName: 'wasm',
    setupFunc: stock.setupFunc,
    disposeFunc: stock.disposeFunc,
    kernelFunc: (args) => {
      const { inputs, attrs, backend } = args as unknown as {
        inputs: { a: TensorInfo; b: TensorInfo };
        attrs: { transposeA: boolean; transposeB: boolean };
        backend: WasmBackend;
      };
      return perEntryMatMul(inputs.a, inputs.b, attrs, backend) ?? stock.kernelFunc(args);
    },
  });
  return true;
}
