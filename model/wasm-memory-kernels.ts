// Wasm kernels that only move memory, replaced by cheaper equivalents (tfjs-backend-wasm 4.22's
// own are in its src/kernels/): measured by `npm run bench:train -- --profile`.
// - Identity copies its input into a new buffer. The gradient tape clones every input it saves for
//   the backward pass through Identity, so a training step copied each activation several times
//   (700 copies per tiny step). Tensors are immutable (a variable's assign swaps buffers), so sharing
//   the buffer with a reference count, as the cpu backend's Identity and wasm's own Reshape do, is
//   the same value for free. Cast to the dtype a tensor already has (tfjs-core's Multiply gradient
//   casts both operands to float32) is the same copy and gets the same treatment.
// - GatherV2 goes through a generic strided C++ loop: 512 rows of a [576, 256] embedding took 15 ms.
//   Gathering whole rows along axis 0 (embedding lookups, the logprob's picked logits and head rows)
//   is a row copy per index here; other axes and batch dimensions keep the stock kernel.
// - Slice (and SplitV, which slices) first copies the whole input out of the heap (readSync) and
//   then picks from the copy: splitting a tensor in k parts copied it k times. Here each part is
//   copied straight within the heap, one contiguous run at a time.
// - Concat makes a subarray view per row and input; here runs are moved within the heap
//   (copyWithin), without a view object per run, and short runs element by element.
import * as tf from '@tensorflow/tfjs';

type TensorInfo = { dataId: object; shape: number[]; dtype: tf.DataType };

interface WasmBackend {
  incRef(dataId: object): void;
  makeOutput(shape: number[], dtype: tf.DataType): TensorInfo;
  typedArrayFromHeap(info: TensorInfo): Float32Array | Int32Array | Uint8Array;
  dataIdMap: { get(dataId: object): { memoryOffset: number } | undefined };
  wasm: { HEAPU8: Uint8Array };
}

function isWasmBackend(backend: unknown): backend is WasmBackend {
  const b = backend as Partial<WasmBackend> | null;
  return (
    b !== null &&
    typeof b === 'object' &&
    typeof b.incRef === 'function' &&
    typeof b.makeOutput === 'function' &&
    typeof b.typedArrayFromHeap === 'function' &&
    typeof b.dataIdMap?.get === 'function' &&
    b.wasm?.HEAPU8 instanceof Uint8Array
  );
}

/** Runs shorter than this many elements are copied element by element (a native call costs more). */
const shortRun = 16;

/**
 * Copies `count` elements from element `from` of `source` to element `to` of `target`, both
 * tensors on the wasm heap: one memmove within the heap (Uint8Array.copyWithin), or a loop when short.
 * Call only after the last allocation of the kernel (an allocation may grow, and so move, the heap).
 */
function heapCopier(backend: WasmBackend, source: TensorInfo, target: TensorInfo) {
  const heap = backend.wasm.HEAPU8;
  const bytes = source.dtype === 'bool' ? 1 : 4;
  const sourceBase = (backend.dataIdMap.get(source.dataId)?.memoryOffset as number) / bytes;
  const targetBase = (backend.dataIdMap.get(target.dataId)?.memoryOffset as number) / bytes;
  const sourceView = backend.typedArrayFromHeap(source);
  const targetView = backend.typedArrayFromHeap(target);
  return (from: number, to: number, count: number) => {
    if (count < shortRun) {
      for (let j = 0; j < count; j++) targetView[to + j] = sourceView[from + j] as number;
    } else {
      heap.copyWithin(
        (targetBase + to) * bytes,
        (sourceBase + from) * bytes,
        (sourceBase + from + count) * bytes,
      );
    }
  };
}

/** Rows of x [R, ...] at int32 `indices` (any shape) → [...indices.shape, ...x.shape[1:]]. */
function gatherRows(x: TensorInfo, indices: TensorInfo, backend: WasmBackend): TensorInfo {
  const rows = x.shape[0] as number;
  const rowSize = x.shape.slice(1).reduce((a, b) => a * b, 1);
  const out = backend.makeOutput([...indices.shape, ...x.shape.slice(1)], x.dtype);
  const at = backend.typedArrayFromHeap(indices);
  const copy = heapCopier(backend, x, out);
  for (let i = 0; i < at.length; i++) {
    const row = at[i] as number;
    if (!(row >= 0 && row < rows)) {
      throw new Error(`GatherV2: the index value ${row} is not in [0, ${rows - 1}]`);
    }
    copy(row * rowSize, i * rowSize, rowSize);
  }
  return out;
}

/** Copies x[begin : begin + size] (row-major, any rank ≥ 1) into `out`. */
function copySlice(
  x: TensorInfo,
  begin: readonly number[],
  size: readonly number[],
  out: TensorInfo,
  backend: WasmBackend,
): void {
  const shape = x.shape;
  const rank = shape.length;
  const strides = new Array<number>(rank);
  strides[rank - 1] = 1;
  for (let d = rank - 2; d >= 0; d--) strides[d] = (strides[d + 1] as number) * (shape[d + 1] as number);
  // Trailing axes taken whole merge into one contiguous run.
  let k = rank - 1;
  while (k > 0 && size[k] === shape[k]) k--;
  const run = (size[k] as number) * (strides[k] as number);
  let outer = 1;
  for (let d = 0; d < k; d++) outer *= size[d] as number;
  const index = new Array<number>(k).fill(0);
  const copy = heapCopier(backend, x, out);
  let to = 0;
  for (let n = 0; n < outer; n++) {
    let from = (begin[k] as number) * (strides[k] as number);
    for (let d = 0; d < k; d++)
      from += ((begin[d] as number) + (index[d] as number)) * (strides[d] as number);
    copy(from, to, run);
    to += run;
    for (let d = k - 1; d >= 0; d--) {
      index[d] = (index[d] as number) + 1;
      if ((index[d] as number) < (size[d] as number)) break;
      index[d] = 0;
    }
  }
}

function sliceOf(x: TensorInfo, begin: number[], size: number[], backend: WasmBackend): TensorInfo {
  const out = backend.makeOutput(size, x.dtype);
  if (size.every((extent) => extent > 0)) copySlice(x, begin, size, out, backend);
  return out;
}

/** Inputs laid side by side along `axis`: per outer index, each input's contiguous block in turn. */
function concatOf(inputs: readonly TensorInfo[], axis: number, backend: WasmBackend): TensorInfo {
  const first = inputs[0] as TensorInfo;
  const outShape = [...first.shape];
  outShape[axis] = inputs.reduce((sum, input) => sum + (input.shape[axis] as number), 0);
  const out = backend.makeOutput(outShape, first.dtype);
  const nonEmpty = inputs.filter((input) => input.shape.every((extent) => extent > 0));
  const outer = first.shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const inner = nonEmpty.map((input) => input.shape.slice(axis).reduce((a, b) => a * b, 1));
  const rowLength = inner.reduce((a, b) => a + b, 0);
  const copies = nonEmpty.map((input) => heapCopier(backend, input, out));
  for (let b = 0; b < outer; b++) {
    let to = b * rowLength;
    for (let i = 0; i < nonEmpty.length; i++) {
      const length = inner[i] as number;
      (copies[i] as (from: number, to: number, count: number) => void)(b * length, to, length);
      to += length;
    }
  }
  return out;
}

let registered = false;

/** A new reference to x's buffer. */
function share(x: TensorInfo, backend: WasmBackend): TensorInfo {
  backend.incRef(x.dataId);
  return { dataId: x.dataId, shape: [...x.shape], dtype: x.dtype };
}

/** Installs them for the wasm backend (once per process); false leaves the stock kernels. */
export function registerWasmMemoryKernels(): boolean {
  if (registered) return true;
  const identity = tf.getKernel('Identity', 'wasm');
  const gather = tf.getKernel('GatherV2', 'wasm');
  const cast = tf.getKernel('Cast', 'wasm');
  const slice = tf.getKernel('Slice', 'wasm');
  const splitV = tf.getKernel('SplitV', 'wasm');
  const concat = tf.getKernel('Concat', 'wasm');
  if (!identity || !gather || !cast || !slice || !splitV || !concat || !isWasmBackend(tf.findBackend('wasm')))
    return false;
  registered = true;
  tf.unregisterKernel('Identity', 'wasm');
  tf.registerKernel({
    kernelName: 'Identity',
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend }) => share(inputs.x as TensorInfo, backend as WasmBackend),
  });
  tf.unregisterKernel('Cast', 'wasm');
  tf.registerKernel({
    kernelName: 'Cast',
    backendName: 'wasm',
    setupFunc: cast.setupFunc,
    disposeFunc: cast.disposeFunc,
    kernelFunc: (args) => {
      const x = args.inputs.x as TensorInfo;
      return (args.attrs as { dtype: tf.DataType }).dtype === x.dtype
        ? share(x, args.backend as WasmBackend)
        : (cast.kernelFunc(args) as TensorInfo);
    },
  });
  tf.unregisterKernel('GatherV2', 'wasm');
  tf.registerKernel({
    kernelName: 'GatherV2',
    backendName: 'wasm',
    setupFunc: gather.setupFunc,
    disposeFunc: gather.disposeFunc,
    kernelFunc: (args) => {
      const x = args.inputs.x as TensorInfo;
      const indices = args.inputs.indices as TensorInfo;
      const { axis, batchDims } = args.attrs as { axis: number; batchDims: number };
      const rowGather =
        (axis === 0 || axis === -x.shape.length) &&
        (batchDims ?? 0) === 0 &&
        x.shape.length >= 1 &&
        indices.dtype === 'int32' &&
        (x.dtype === 'float32' || x.dtype === 'int32');
      return rowGather
        ? gatherRows(x, indices, args.backend as WasmBackend)
        : (gather.kernelFunc(args) as TensorInfo);
    },
  });
  tf.unregisterKernel('Slice', 'wasm');
  tf.registerKernel({
    kernelName: 'Slice',
    backendName: 'wasm',
    kernelFunc: (args) => {
      const x = args.inputs.x as TensorInfo;
      if (x.dtype === 'string' || x.shape.length === 0) return slice.kernelFunc(args) as TensorInfo;
      const attrs = args.attrs as { begin: number | number[]; size: number | number[] };
      const [begin, size] = tf.slice_util.parseSliceParams(x, attrs.begin, attrs.size) as [
        number[],
        number[],
      ];
      return sliceOf(x, begin, size, args.backend as WasmBackend);
    },
  });
  tf.unregisterKernel('SplitV', 'wasm');
  tf.registerKernel({
    kernelName: 'SplitV',
    backendName: 'wasm',
    kernelFunc: (args) => {
      const x = args.inputs.x as TensorInfo;
      if (x.dtype === 'string' || x.shape.length === 0) return splitV.kernelFunc(args);
      const attrs = args.attrs as { numOrSizeSplits: number | number[]; axis: number | number[] };
      const axis = tf.util.parseAxisParam(attrs.axis, x.shape)[0] as number;
      const sizes = tf.backend_util.prepareSplitSize(x as unknown as tf.Tensor, attrs.numOrSizeSplits, axis);
      const begin = new Array<number>(x.shape.length).fill(0);
      return sizes.map((extent) => {
        const size = [...x.shape];
        size[axis] = extent;
        const part = sliceOf(x, [...begin], size, args.backend as WasmBackend);
        begin[axis] = (begin[axis] as number) + extent;
        return part;
      });
    },
  });
  tf.unregisterKernel('Concat', 'wasm');
  tf.registerKernel({
    kernelName: 'Concat',
    backendName: 'wasm',
    kernelFunc: (args) => {
      const inputs = Object.values(args.inputs) as TensorInfo[];
      const first = inputs[0];
      if (!first || first.dtype === 'string' || first.shape.length === 0) return concat.kernelFunc(args);
      const axis = tf.util.parseAxisParam(
        (args.attrs as { axis: number | number[] }).axis,
        first.shape,
      )[0] as number;
      tf.backend_util.assertParamsConsistent(
        inputs.map((input) => input.shape),
        axis,
      );
      return concatOf(inputs, axis, args.backend as WasmBackend);
    },
  });
  return true;
}
