// Splits a step's sequences into micro-batches whose padded size (sequences × longest) stays within a
// token budget, to bound the memory of one forward/backward pass. Sequences are taken longest first, so
// each micro-batch pads to a similar length. Order does not change the step's gradient (aggregate.ts).

export interface MicroBatchPlan {
  /** Indices into the input, per micro-batch. */
  readonly batches: number[][];
  /** Indices of sequences longer than the budget on their own: each is still planned, alone. */
  readonly oversize: number[];
}

export function planMicroBatches(
  sequenceLengths: readonly number[],
  maxPaddedTokens: number,
): MicroBatchPlan {
  if (!(Number.isInteger(maxPaddedTokens) && maxPaddedTokens > 0)) {
    throw new RangeError(`maxPaddedTokens must be an integer > 0, got ${maxPaddedTokens}`);
  }
  sequenceLengths.forEach((length, index) => {
    if (!(Number.isInteger(length) && length > 0)) {
      throw new RangeError(`sequence ${index} length must be an integer > 0, got ${length}`);
    }
  });
  const order = sequenceLengths
    .map((length, index) => ({ length, index }))
    .sort((a, b) => b.length - a.length || a.index - b.index);
  const batches: number[][] = [];
  let current: number[] = [];
  let longest = 0;
  for (const { length, index } of order) {
    // Longest first: the batch's padded length is its first sequence's.
    if (current.length > 0 && (current.length + 1) * longest > maxPaddedTokens) {
      batches.push(current);
      current = [];
    }
    if (current.length === 0) longest = length;
    current.push(index);
  }
  if (current.length > 0) batches.push(current);
  const oversize = sequenceLengths.flatMap((length, index) => (length > maxPaddedTokens ? [index] : []));
  return { batches, oversize };
}
