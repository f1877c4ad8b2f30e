// A batch of sequences decoded one step at a time, for continuous batching: rows join with their own
// prefill (left-padded, positions from each row's first real token), every step feeds one token per row through the shared
// key/value cache, and finished rows leave between steps. Sampling stays with the caller, which gets
// each step's next-token logits on the host. Leaves out sampling, stop rules and scheduling.
// Legend: B rows, n joining rows, L longest joining prompt, S cached positions, K key/value heads,
// hd head dim, V vocab.
import * as tf from '@tensorflow/tfjs';
import { attentionMaskBias } from './attention-mask.ts';
import { type Decoder, decoderForward } from './decoder.ts';
import { disposeKvCache, type KvCache, type KvPair } from './kv-cache.ts';
import type { LoraAdapter } from './lora.ts';
import { loraRoutes } from './lora-routes.ts';
import { tidy } from './tidy.ts';

export interface DecodeRowInput {
  /** Prompt token ids (at least one). */
  readonly prompt: readonly number[];
  /** The row's adapter, or null for the base model. */
  readonly adapter: LoraAdapter | null;
}

export class DecodeBatch {
  private cache: KvCache | undefined;
  /** Per row, one flag per cached position: 1 real token, 0 padding. */
  private keyValid: number[][] = [];
  /** Per row, the RoPE position of the next token fed (= tokens the row holds so far). */
  private nextPosition: number[] = [];
  private adapters: (LoraAdapter | null)[] = [];

  constructor(private readonly decoder: Decoder) {}

  /** B: rows in the batch. */
  get size(): number {
    return this.adapters.length;
  }

  /** S: cached positions per row, padding included (what one step attends over). */
  get cachedPositions(): number {
    return this.cache?.length ?? 0;
  }

  /** Tokens row `row` holds (its prompt plus every token fed since). */
  length(row: number): number {
    const position = this.nextPosition[row];
    if (position === undefined) throw new RangeError(`row ${row} is not in a batch of ${this.size}`);
    return position;
  }

  /**
   * Prefills `rows` and appends them after the current rows (rows already decoding keep their
   * index). Returns the joining rows' next-token logits, n × V floats.
   */
  async add(rows: readonly DecodeRowInput[]): Promise<Float32Array> {
    if (rows.length === 0) return new Float32Array(0);
    const { maxPositionEmbeddings, vocabSize } = this.decoder.config;
    rows.forEach(({ prompt }, index) => {
      if (prompt.length === 0) throw new RangeError(`joining row ${index} has an empty prompt`);
      if (prompt.length > maxPositionEmbeddings) {
        throw new RangeError(
          `joining row ${index} has ${prompt.length} tokens; the model takes at most ${maxPositionEmbeddings} positions`,
        );
      }
      const bad = prompt.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
      if (bad >= 0) {
        throw new RangeError(
          `joining row ${index}, position ${bad}: token id ${prompt[bad]} is outside the vocabulary [0, ${vocabSize})`,
        );
      }
    });
    const longest = Math.max(...rows.map((row) => row.prompt.length));
    const padded = rows.map(({ prompt }) => [
      ...new Array<number>(longest - prompt.length).fill(0),
      ...prompt,
    ]);
    const positions = rows.map(({ prompt }) =>
      Array.from({ length: longest }, (_, i) => Math.max(0, i - (longest - prompt.length))),
    );
    const keyValid = rows.map(({ prompt }) =>
      Array.from({ length: longest }, (_, i) => (i < longest - prompt.length ? 0 : 1)),
    );
    const adapters = rows.map((row) => row.adapter);
    const { logits, cache } = forwardStep(this.decoder, padded, positions, keyValid, undefined, adapters);
    try {
      this.append(cache, keyValid, adapters);
    } catch (error) {
      logits.dispose();
      disposeKvCache(cache);
      throw error;
    }
    for (const row of rows) this.nextPosition.push(row.prompt.length);
    return readAndDispose(logits);
  }

  /** Feeds `tokens[b]` to row b and returns every row's next-token logits, B × V floats. */
  async step(tokens: readonly number[]): Promise<Float32Array> {
    const b = this.size;
    if (tokens.length !== b) throw new RangeError(`step got ${tokens.length} tokens for ${b} rows`);
    if (b === 0 || !this.cache) throw new RangeError('step on an empty batch: add rows first');
    const { maxPositionEmbeddings, vocabSize } = this.decoder.config;
    tokens.forEach((token, row) => {
      if (!Number.isInteger(token) || token < 0 || token >= vocabSize) {
        throw new RangeError(`row ${row}: token id ${token} is outside the vocabulary [0, ${vocabSize})`);
      }
      if ((this.nextPosition[row] as number) >= maxPositionEmbeddings) {
        throw new RangeError(
          `row ${row} already holds ${maxPositionEmbeddings} positions, the model's limit`,
        );
      }
    });
    const keyValid = this.keyValid.map((row) => [...row, 1]);
    const { logits, cache } = forwardStep(
      this.decoder,
      tokens.map((token) => [token]),
      this.nextPosition.map((position) => [position]),
      keyValid,
      this.cache,
      this.adapters,
    );
    disposeKvCache(this.cache);
    this.cache = cache;
    this.keyValid = keyValid;
    this.nextPosition = this.nextPosition.map((position) => position + 1);
    return readAndDispose(logits);
  }

  /**
   * Keeps only `rows` (indices into the current batch), in that order, and drops cached columns that
   * every remaining row has as padding (rows that joined late or left leave such columns behind).
   */
  retain(rows: readonly number[]): void {
    rows.forEach((row) => {
      if (!Number.isInteger(row) || row < 0 || row >= this.size)
        throw new RangeError(`retain: row ${row} is not in a batch of ${this.size}`);
    });
    if (new Set(rows).size !== rows.length) throw new RangeError(`retain: rows repeat: ${rows.join(', ')}`);
    if (rows.length === this.size && rows.every((row, index) => row === index)) return;
    const keyValid = rows.map((row) => this.keyValid[row] as number[]);
    const s = this.cachedPositions;
    let unused = s;
    for (const flags of keyValid) unused = Math.min(unused, flags.indexOf(1) === -1 ? s : flags.indexOf(1));
    const old = this.cache;
    if (rows.length === 0 || !old) {
      disposeKvCache(old);
      this.cache = undefined;
    } else {
      this.cache = tidy(() => {
        const index = tf.tensor1d(rows as number[], 'int32');
        const pick = (x: tf.Tensor4D) =>
          tf.slice(tf.gather(x, index, 0), [0, 0, unused, 0], [-1, -1, s - unused, -1]) as tf.Tensor4D; // [B', K, S', hd]
        return {
          layers: old.layers.map(({ k, v }): KvPair => ({ k: pick(k), v: pick(v) })),
          length: s - unused,
        };
      });
      disposeKvCache(old);
    }
    this.keyValid = rows.length === 0 ? [] : keyValid.map((flags) => flags.slice(unused));
    this.nextPosition = rows.map((row) => this.nextPosition[row] as number);
    this.adapters = rows.map((row) => this.adapters[row] as LoraAdapter | null);
  }

  /** Frees the cache; the batch is empty afterwards and may be reused. */
  dispose(): void {
    this.retain([]);
  }

  /** Concatenates a joining cache after the current one, left-padding the shorter along S. */
  private append(cache: KvCache, keyValid: number[][], adapters: (LoraAdapter | null)[]): void {
    const old = this.cache;
    if (!old) {
      this.cache = cache;
      this.keyValid = keyValid;
      this.adapters = adapters;
      return;
    }
    const s = Math.max(old.length, cache.length);
    const padOld = s - old.length;
    const padNew = s - cache.length;
    const leftPad = (x: tf.Tensor4D, by: number) =>
      by === 0
        ? x
        : tf.pad(x, [
            [0, 0],
            [0, 0],
            [by, 0],
            [0, 0],
          ]); // [·, K, S, hd]
    const merged = tidy(() => ({
      layers: old.layers.map(({ k, v }, layer): KvPair => {
        const joining = cache.layers[layer] as KvPair;
        return {
          k: tf.concat([leftPad(k, padOld), leftPad(joining.k, padNew)], 0) as tf.Tensor4D, // [B + n, K, S, hd]
          v: tf.concat([leftPad(v, padOld), leftPad(joining.v, padNew)], 0) as tf.Tensor4D, // [B + n, K, S, hd]
        };
      }),
      length: s,
    }));
    disposeKvCache(old);
    disposeKvCache(cache);
    this.cache = merged;
    const zeros = (count: number) => new Array<number>(count).fill(0);
    this.keyValid = [
      ...this.keyValid.map((flags) => [...zeros(padOld), ...flags]),
      ...keyValid.map((flags) => [...zeros(padNew), ...flags]),
    ];
    this.adapters = [...this.adapters, ...adapters];
  }
}

/** One forward call over [B, T] new tokens; returns the last position's logits [B, V] and the grown cache. */
function forwardStep(
  decoder: Decoder,
  ids: readonly (readonly number[])[],
  positions: readonly (readonly number[])[],
  keyValid: readonly (readonly number[])[],
  past: KvCache | undefined,
  adapters: readonly (LoraAdapter | null)[],
): { logits: tf.Tensor2D; cache: KvCache } {
  return tidy(() => {
    const b = ids.length;
    const t = ids[0]?.length ?? 0;
    const { hidden, cache } = decoderForward(decoder, {
      ids: tf.tensor2d(ids.flat(), [b, t], 'int32'),
      positions: tf.tensor2d(positions.flat(), [b, t], 'int32'),
      maskBias: attentionMaskBias(keyValid, t),
      past,
      lora: loraRoutes(adapters, t),
      keepKv: true,
    });
    const last = tf.reshape(tf.slice(hidden, [0, t - 1, 0], [b, 1, -1]), [b, decoder.config.hiddenSize]); // [B, D]
    const logits = tf.matMul(last, decoder.weights.lmHeadT) as tf.Tensor2D; // [B, V]
    return { logits, cache: cache as KvCache };
  });
}

async function readAndDispose(logits: tf.Tensor2D): Promise<Float32Array> {
  try {
    return (await logits.data()) as Float32Array;
  } finally {
    logits.dispose();
  }
}
