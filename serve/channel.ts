// An unbounded single-consumer queue that is also an async iterable: the engine loop pushes a
// request's events synchronously, the route handler awaits them. Leaves out back-pressure (a
// request's events are bounded by its max_tokens).

export interface Channel<T> extends AsyncIterable<T> {
  push(value: T): void;
  /** Ends the iteration after the queued values. */
  close(): void;
  /** Ends the iteration with `error` after the queued values. */
  fail(error: unknown): void;
}

export function createChannel<T>(): Channel<T> {
  const queue: T[] = [];
  let ended = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  return {
    push(value) {
      if (ended) return;
      queue.push(value);
      notify();
    },
    close() {
      ended = true;
      notify();
    },
    fail(error) {
      if (ended) return;
      failure = { error };
      ended = true;
      notify();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (queue.length > 0) {
          yield queue.shift() as T;
          continue;
        }
        if (ended) {
          if (failure) throw failure.error;
          return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
  };
}
