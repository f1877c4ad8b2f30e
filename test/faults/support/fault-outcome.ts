// What each fault scenario found when it checked the store after the fault: turns lost, rows
// duplicated, and things leaked (a lease, a process, a large object, a lock, a running row left
// behind). A scenario counts them from the real store, records them on its test, then asserts each
// is 0; the fault suite's reporter (fault-summary-reporter.ts) sums them over every scenario into
// the line `.ci/run` prints. Vitest carries `task.meta` from the test worker to reporters.
import type { TestContext } from 'vitest';

export interface FaultOutcome {
  /** Turns the store should hold and does not (an episode's reply, a proxied exchange). */
  readonly lostTurns: number;
  /** Rows stored twice (a turn, a step, a version, a group in two updates). */
  readonly duplicates: number;
  /** Anything left held or open that should not be: leases, running rows, processes, locks, objects. */
  readonly leaks: number;
}

declare module 'vitest' {
  interface TaskMeta {
    fault?: FaultOutcome;
  }
}

/** Records the scenario's counts on its test (adding to any recorded earlier in the same test). */
export function recordFaultOutcome(context: Pick<TestContext, 'task'>, outcome: FaultOutcome): void {
  const earlier = context.task.meta.fault;
  context.task.meta.fault = earlier
    ? {
        lostTurns: earlier.lostTurns + outcome.lostTurns,
        duplicates: earlier.duplicates + outcome.duplicates,
        leaks: earlier.leaks + outcome.leaks,
      }
    : outcome;
}
