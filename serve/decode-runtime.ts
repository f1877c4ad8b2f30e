// What the engine (engine.ts) decodes with: the model's adapters by key and one batch of rows
// (model/decode-batch.ts's add / step / retain), in this thread or spread over worker threads
// (workers/worker-decode-runtime.ts, `--workers N`). The engine never sees which: it names
// adapters by registry key, rows by batch index, and gets next-token logits on the host.
import type { ModelConfig } from '../model/hf-config.ts';
import { DecodeBatch } from '../model/decode-batch.ts';
import type { PolicyModel } from '../model/policy-model.ts';

export interface DecodeRowSpec {
  /** Prompt token ids (at least one). */
  readonly prompt: readonly number[];
  /** The row's adapter by registry key (a loaded one), or null for the base model. */
  readonly adapterKey: string | null;
}

export interface DecodeRuntime {
  readonly config: ModelConfig;
  /** Worker threads decoding; 0 when the model runs in this thread. */
  readonly workers: number;
  /** Loads a PEFT adapter directory under `key`; resolves once every copy of the model holds it. */
  loadAdapter(key: string, path: string): Promise<void>;
  /** Frees an adapter no row uses any more. */
  removeAdapter(key: string): void;
  /**
   * The logits at every position of one prompt, T × V (vLLM's `prompt_logprobs`): a forward pass
   * of its own, outside the batch, so the rows decoding keep their cache.
   */
  promptLogits(row: DecodeRowSpec): Promise<Float32Array>;
  /** Prefills `rows` after the current ones; their next-token logits, rows × V. */
  add(rows: readonly DecodeRowSpec[]): Promise<Float32Array>;
  /** Feeds `tokens[b]` to row b; every row's next-token logits, B × V. */
  step(tokens: readonly number[]): Promise<Float32Array>;
  /** Keeps only `rows` (batch indices), in that order. */
  retain(rows: readonly number[]): void;
  /** Empties the batch (after a failed step: its cache is in an unknown state). */
  clear(): void;
  /** Frees the batch and the model. */
  close(): Promise<void>;
}

/** The model in this thread: what serve-model did before workers, and `--workers 0`. */
export class LocalDecodeRuntime implements DecodeRuntime {
  readonly workers = 0;
  readonly #batch: DecodeBatch;

  constructor(private readonly model: PolicyModel) {
    this.#batch = new DecodeBatch(model.decoder);
  }

  get config(): ModelConfig {
    return this.model.config;
  }

  async loadAdapter(key: string, path: string): Promise<void> {
    await this.model.loadAdapter(key, path);
  }

  removeAdapter(key: string): void {
    this.model.removeAdapter(key);
  }

  async promptLogits(row: DecodeRowSpec): Promise<Float32Array> {
    const logits = this.model.forwardLogits([[...row.prompt]], {
      adapter: row.adapterKey,
    }); // [1, T, V]
    try {
      return (await logits.data()) as Float32Array;
    } finally {
      logits.dispose();
    }
  }

  add(rows: readonly DecodeRowSpec[]): Promise<Float32Array> {
    return this.#batch.add(
      rows.map((row) => ({
        prompt: row.prompt,
        adapter: row.adapterKey === null ? null : this.model.adapter(row.adapterKey),
      })),
    );
  }

  step(tokens: readonly number[]): Promise<Float32Array> {
    return this.#batch.step(tokens);
  }

  retain(rows: readonly number[]): void {
    this.#batch.retain(rows);
  }

  clear(): void {
    this.#batch.dispose();
  }

  async close(): Promise<void> {
    this.#batch.dispose();
    this.model.dispose();
  }
}
