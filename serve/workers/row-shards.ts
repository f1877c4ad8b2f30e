// Which decode worker owns each row of serve-model's batch, and the index maps between the engine's
// one batch order and each worker's own batch. Invariant: worker w's batch holds, in order, the
// subsequence of the engine's rows that w owns (joining rows are appended in order on both sides,
// and a retain keeps the engine's new order on both). A joining row goes to the first worker that
// holds fewer than `fillRows` rows, so a small batch stays on one worker (a step waits for its
// slowest worker, and below a few dozen rows a step costs about the same at any size); once every
// worker holds that many, to the one holding the fewest (the lowest index on ties), so the batch
// stays balanced as rows leave at different times. Pure: indices in, indices out.

export class RowShards {
  /** owners[b]: the worker of the engine's row b. */
  #owners: number[] = [];

  constructor(
    readonly workers: number,
    /** Rows a worker takes before the next one gets any; 0 balances from the first row. */
    readonly fillRows = 0,
  ) {
    if (!(Number.isInteger(workers) && workers >= 1)) {
      throw new RangeError(`row shards need an integer count of workers >= 1, got ${workers}`);
    }
    if (!(Number.isInteger(fillRows) && fillRows >= 0)) {
      throw new RangeError(`row shards need an integer fillRows >= 0, got ${fillRows}`);
    }
  }

  get size(): number {
    return this.#owners.length;
  }

  /** Rows worker `w` holds. */
  rowsOf(w: number): number {
    return this.#owners.filter((owner) => owner === w).length;
  }

  /** Assigns `count` joining rows (appended after the current ones); returns each one's worker. */
  assign(count: number): number[] {
    const held = Array.from({ length: this.workers }, (_, w) => this.rowsOf(w));
    const owners: number[] = [];
    for (let i = 0; i < count; i++) {
      let least = held.findIndex((rows) => rows < this.fillRows);
      if (least === -1) {
        least = 0;
        for (let w = 1; w < this.workers; w++) if ((held[w] as number) < (held[least] as number)) least = w;
      }
      owners.push(least);
      held[least] = (held[least] as number) + 1;
    }
    this.#owners.push(...owners);
    return owners;
  }

  /** The engine's rows in order, split per worker (each worker's own order). */
  split<T>(items: readonly T[], owners: readonly number[] = this.#owners): T[][] {
    if (items.length !== owners.length) {
      throw new RangeError(`split: ${items.length} items for ${owners.length} rows`);
    }
    const parts = Array.from({ length: this.workers }, (): T[] => []);
    items.forEach((item, b) => {
      parts[owners[b] as number]?.push(item);
    });
    return parts;
  }

  /** Per-worker results of `width` floats a row, back in the engine's order of `owners`. */
  gather(
    parts: readonly Float32Array[],
    width: number,
    owners: readonly number[] = this.#owners,
  ): Float32Array {
    const out = new Float32Array(owners.length * width);
    const next = new Array<number>(this.workers).fill(0);
    owners.forEach((owner, b) => {
      const local = next[owner] as number;
      next[owner] = local + 1;
      const part = parts[owner];
      if (!part || part.length < (local + 1) * width) {
        throw new RangeError(`gather: worker ${owner} returned too few rows`);
      }
      out.set(part.subarray(local * width, (local + 1) * width), b * width);
    });
    return out;
  }

  /**
   * Keeps the engine's `rows` (indices, in the new order); returns each worker's retain, as indices
   * into its own batch, in the same order.
   */
  retain(rows: readonly number[]): number[][] {
    const local: number[] = [];
    const count = new Array<number>(this.workers).fill(0);
    for (const owner of this.#owners) {
      local.push(count[owner] as number);
      count[owner] = (count[owner] as number) + 1;
    }
    const parts = Array.from({ length: this.workers }, (): number[] => []);
    for (const row of rows) {
      const owner = this.#owners[row];
      if (owner === undefined) throw new RangeError(`retain: row ${row} is not in a batch of ${this.size}`);
      parts[owner]?.push(local[row] as number);
    }
    this.#owners = rows.map((row) => this.#owners[row] as number);
    return parts;
  }
}
