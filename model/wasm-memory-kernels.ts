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
//   copied straight from a view of the heap, one contiguous run at a time.
import * as tf from '@tensorflow/tfjs';

type TensorInfo = { dataId: object; shape: number[]; dtype: tf.DataType };

interface WasmBackend {
  incRef(dataId: object): void;
  makeOutput(shape: number[], dtype: tf.DataType): TensorInfo;
  typedArrayFromHeap(info: TensorInfo): Float32Array | Int32Array | Uint8Array;
}

function isWasmBackend(backend: unknown): backend is WasmBackend {
  const b = backend as Partial<WasmBackend> | null;
  return (
    b !== null &&
    typeof b === 'object' &&
    typeof b.incRef === 'function' &&
    typeof b.makeOutput === 'function' &&
    typeof b.typedArrayFromHeap === 'function'
  );
}

/** Rows of x [R, ...] at int32 `indices` (any shape) → [...indices.shape, ...x.shape[1:]]. */
function gatherRows(x: TensorInfo, indices: TensorInfo, backend: WasmBackend): TensorInfo {
  const rows = x.shape[0] as number;
  const rowSize = x.shape.slice(1).reduce((a, b) => a * b, 1);
  const out = backend.makeOutput([...indices.shape, ...x.shape.slice(1)], x.dtype);
  // Views only after makeOutput: an allocation may grow (and so move) the heap.
  const source = backend.typedArrayFromHeap(x);
  const at = backend.typedArrayFromHeap(indices);
  const target = backend.typedArrayFromHeap(out);
  for (let i = 0; i < at.length; i++) {
    const row = at[i] as number;
    if (!(row >= 0 && row < rows)) {
      throw new Error(`GatherV2: the index value ${row} is not in [0, ${rows - 1}]`);
    }
    const from = row * rowSize;
    const to = i * rowSize;
    if (rowSize < 32) {
      for (let j = 0; j < rowSize; j++) target[to + j] = source[from + j] as number;
    } else {
      target.set(source.subarray(from, from + rowSize), to);
    }
  }
  return out;
}

/** Copies x[begin : begin + size] (row-major, any rank ≥ 1) from `source` into `target`. */
function copySlice(
  source: ArrayLike<number>,
  shape: readonly number[],
  begin: readonly number[],
  size: readonly number[],
  target: { [index: number]: number; set(array: ArrayLike<number>, offset: number): void },
): void {
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
  const view = source as Float32Array;
  let to = 0;
  for (let n = 0; n < outer; n++) {
    let from = (begin[k] as number) * (strides[k] as number);
    for (let d = 0; d < k; d++)
      from += ((begin[d] as number) + (index[d] as number)) * (strides[d] as number);
    if (run < 32) for (let j = 0; j < run; j++) target[to + j] = view[from + j] as number;
    else target.set(view.subarray(from, from + run), to);
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
  if (size.every((extent) => extent > 0)) {
    // Views only after makeOutput (see gatherRows).
    copySlice(backend.typedArrayFromHeap(x), x.shape, begin, size, backend.typedArrayFromHeap(out));
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
  if (!identity || !gather || !cast || !slice || !splitV || !isWasmBackend(tf.findBackend('wasm')))
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
  return true;
}
