// `--every`: a cycle every interval until SIGINT or SIGTERM, which stop it after the current cycle (a
// second signal exits at once). Exit status 1 when the last cycle failed or its publication did. A
// cycle that failed because the store was unreachable is followed by waiting the store out
// (--store-retry-seconds, --max-store-wait) and reloading the lineage, then the next cycle at once.
import { isStoreUnreachable } from '../../db/store-unreachable.ts';
import type { CycleReport } from '../../trainer/train/cycle-state.ts';
import type { StoreWaitSettings } from '../../trainer/train/store-wait-settings.ts';
import { storeWaitFrom, waitOutStore } from '../../trainer/train/wait-out-store.ts';
import { describeCycle } from './describe-cycle.ts';
import { describeCycleFailure } from './describe-cycle-failure.ts';
import { stopAfterCycle } from './stop-after-cycle.ts';

/** After a cycle failed on an unreachable store: how long to wait it out, and how to re-read the lineage. */
export interface StoreRecovery {
  readonly settings: StoreWaitSettings;
  readonly reload: () => Promise<void>;
}

export async function repeatCycles(
  cycle: () => Promise<CycleReport>,
  everyMs: number,
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
  recovery?: StoreRecovery,
  /** The line printed per cycle: text, or `--json`'s object. */
  describe: (report: CycleReport) => string = describeCycle,
): Promise<number> {
  const signals = stopAfterCycle(stderr);
  let failures = 0;
  try {
    while (!signals.stopping()) {
      const started = Date.now();
      try {
        const report = await cycle();
        stdout.write(`${describe(report)}\n`);
        failures = report.kind === 'publish-failed' ? failures + 1 : 0;
      } catch (error) {
        failures += 1;
        stderr.write(`edgerl train: ${describeCycleFailure(error)}\n`);
        if (recovery && isStoreUnreachable(error)) {
          const reloaded = await waitOutStore(
            recovery.reload,
            storeWaitFrom(recovery.settings, {
              stopping: signals.stopping,
              wait: signals.wait,
              log: (line) => stderr.write(`edgerl train: ${line}\n`),
              what: 'reload the last checkpoint',
            }),
          );
          if (reloaded.kind === 'stopped') break;
          continue;
        }
      }
      const wait = Math.max(0, everyMs - (Date.now() - started));
      if (signals.stopping()) break;
      await signals.wait(wait);
    }
    return failures > 0 ? 1 : 0;
  } finally {
    signals.dispose();
  }
}
