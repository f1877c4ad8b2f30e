// How the repeating trainer modes (`--every`, `--continuous`) stop: the first SIGINT or SIGTERM lets
// the current cycle finish and cuts short a wait between cycles; a second exits at once (130).
export interface CycleStop {
  /** Whether a signal asked the loop to stop. */
  stopping(): boolean;
  /** Waits `ms`, or less when a signal arrives meanwhile. */
  wait(ms: number): Promise<void>;
  /** Stops listening for the signals. */
  dispose(): void;
}

export function stopAfterCycle(stderr: NodeJS.WritableStream): CycleStop {
  let stopping = false;
  let wake: (() => void) | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      stderr.write(`edgerl train: ${signal} again, exiting now\n`);
      process.exit(130);
    }
    stopping = true;
    stderr.write(`edgerl train: ${signal}: stopping after the current cycle\n`);
    wake?.();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return {
    stopping: () => stopping,
    wait: (ms) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    dispose: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}
