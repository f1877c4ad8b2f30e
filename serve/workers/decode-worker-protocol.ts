// What serve-model's main thread (worker-decode-runtime.ts) and a decode worker thread
// (decode-worker.ts) say to each other, inside model/worker-thread/'s envelope (ready, done,
// failed). A worker holds its own copy of the model and adapters and one DecodeBatch of the rows
// assigned to it; rows are named by their index in that batch. Logits come back as a transferred
// buffer (rows × V floats), token ids travel in the messages.
import type { BackendChoice } from '../../model/backend-names.ts';
import type { DecodeRowSpec } from '../decode-runtime.ts';

export interface DecodeWorkerStart {
  readonly index: number;
  readonly backend: BackendChoice;
  readonly modelDir: string;
}

export type DecodeRequest = { readonly id: number } & (
  | { readonly kind: 'load-adapter'; readonly key: string; readonly path: string }
  | { readonly kind: 'remove-adapter'; readonly key: string }
  | { readonly kind: 'add'; readonly rows: readonly DecodeRowSpec[] }
  | { readonly kind: 'prompt-logits'; readonly row: DecodeRowSpec }
  | { readonly kind: 'step'; readonly tokens: readonly number[] }
  | { readonly kind: 'retain'; readonly rows: readonly number[] }
);

export interface DecodeDone {
  readonly kind: 'done';
  readonly id: number;
  /** add and step: the rows' next-token logits, rows × V; prompt-logits: every position's, T × V. */
  readonly logits?: Float32Array;
}
