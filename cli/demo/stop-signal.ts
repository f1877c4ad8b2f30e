// Ctrl-C for the demo: the first SIGINT/SIGTERM asks every phase to stop after its current unit of
// work (a group's episodes, a training cycle); a second one exits at once. Leaves the cleanup itself
// to the caller's `finally` blocks (servers, trainer lock, store).
export class DemoStopped extends Error {
  override readonly name = 'DemoStopped';
  readonly code = 'demo-stopped';
  /** `--warm-start-only` asked for this stop: a finished run, not an interrupted one (exit 0). */
  readonly planned: boolean;
  constructor(planned: 'signal' | 'warm-start-only' = 'signal') {
    super(
      planned === 'signal'
        ? 'stopped by the user (SIGINT); what was finished is in the store'
        : 'stopped after the warm start (--warm-start-only); a run on the same --data-dir without it continues with RL from this start',
    );
    this.planned = planned !== 'signal';
  }
}

export interface StopSignal {
  readonly stopped: boolean;
  /** Throws DemoStopped once a stop was asked for. */
  check(): void;
  dispose(): void;
}

export function listenForStop(onFirst: (signal: string) => void): StopSignal {
  let stopped = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopped) process.exit(130);
    stopped = true;
    onFirst(signal);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    get stopped() {
      return stopped;
    },
    check() {
      if (stopped) throw new DemoStopped();
    },
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
