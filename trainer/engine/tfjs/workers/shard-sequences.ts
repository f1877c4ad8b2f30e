// Splits a step's sequences between data-parallel workers so that each does about the same work:
// longest first, each to the worker with the fewest tokens so far (Graham's LPT rule, "Bounds on
// multiprocessing timing anomalies", SIAM J. Appl. Math. 17(2), 1969: within 4/3 of the best
// makespan). Each worker then plans its own micro-batches (micro-batches.ts), longest first too, so
// its padding stays as low as the single-thread plan's. Ties go to the lower worker: deterministic.

/** Indices into `lengths` per worker (in the order assigned); a worker may get none. */
export function shardSequences(lengths: readonly number[], workers: number): number[][] {
  if (!(Number.isInteger(workers) && workers >= 1)) {
    throw new RangeError(`workers must be an integer >= 1, got ${workers}`);
  }
  const shards: number[][] = Array.from({ length: workers }, () => []);
  const load = new Array<number>(workers).fill(0);
  const order = lengths
    .map((length, index) => ({ length, index }))
    .sort((a, b) => b.length - a.length || a.index - b.index);
  for (const { length, index } of order) {
    let least = 0;
    for (let worker = 1; worker < workers; worker++) {
      if ((load[worker] as number) < (load[least] as number)) least = worker;
    }
    (shards[least] as number[]).push(index);
    load[least] = (load[least] as number) + length;
  }
  return shards;
}
