// Continuous training (`edgerl train --continuous`): cycle after cycle while the edge keeps rolling
// out with the policy's current default. A cycle starts as soon as a full step's worth of complete
// groups waits (countClaimableGroups; `ready` may lower the bar, e.g. to drain what is left), or at
// once when a checkpoint still waits to be published; otherwise it polls. Each cycle publishes its
// version, which the next rollouts sample from, so the samples a step trains on are at most a few
// versions behind; staleness is bounded and corrected in prepare-step.ts and the loss
// (--max-off-policy-steps, --rollout-correction). A failed cycle is reported and retried after a
// poll. An unreachable store is waited out (wait-out-store.ts, --store-retry-seconds, --max-store-wait):
// the poll is retried with backoff, and a cycle that failed for it is followed by a reload of the lineage
// once the store answers again. Leaves out signals and printing (the CLI's) and the rollouts (the edge's).
import { isStoreUnreachable } from '../../db/store-unreachable.ts';
import type { CycleReport } from './cycle-state.ts';
import { trainedSplits } from './prepare-step.ts';
import { runCycle, type Trainer } from './trainer.ts';
import { storeWaitFrom, waitOutStore } from './wait-out-store.ts';

export interface ContinuousOptions {
  /** Checked before each cycle and each wait: true ends the loop (a running cycle finishes first). */
  readonly stopping: () => boolean;
  /** Wait between polls when too few groups are complete, and after a failure, in ms. */
  readonly pollMs: number;
  /** Resolves after `ms` (or earlier, when the caller is stopping). */
  readonly wait: (ms: number) => Promise<void>;
  /** Whether to start a cycle with `claimable` groups waiting; default: a full --groups-per-step. */
  readonly ready?: (claimable: number) => boolean;
  readonly onCycle?: (report: CycleReport) => void;
  readonly onError?: (error: unknown) => void;
}

export interface ContinuousOutcome {
  readonly cycles: number;
  readonly published: number;
  readonly failures: number;
  /** Whether the last cycle failed or its publication did. */
  readonly lastFailed: boolean;
}

export async function runContinuous(
  trainer: Trainer,
  options: ContinuousOptions,
): Promise<ContinuousOutcome> {
  const { config, deps, policy } = trainer.session;
  const ready = options.ready ?? ((claimable: number) => claimable >= config.groupsPerStep);
  let cycles = 0;
  let published = 0;
  let failures = 0;
  let lastFailed = false;
  const storeWait = (what: string) =>
    storeWaitFrom(config.storeWait, {
      stopping: options.stopping,
      wait: options.wait,
      log: (line) => deps.progress.line(line),
      what,
    });
  while (!options.stopping()) {
    const polled = await waitOutStore(
      () =>
        deps.store.countClaimableGroups({
          policyId: policy.id,
          retryUnscored: config.reward !== 'verifier',
          splits: [...trainedSplits],
        }),
      storeWait('look for complete groups'),
    );
    if (polled.kind === 'stopped') break;
    const claimable = polled.value;
    if (!trainer.position.pending && !ready(claimable)) {
      await options.wait(options.pollMs);
      continue;
    }
    let report: CycleReport | undefined;
    try {
      report = await runCycle(trainer);
      cycles += 1;
      options.onCycle?.(report);
      lastFailed = report.kind === 'publish-failed';
      if (report.kind === 'published') published += 1;
    } catch (error) {
      cycles += 1;
      lastFailed = true;
      options.onError?.(error);
      if (isStoreUnreachable(error)) {
        failures += 1;
        // The cycle's clean-up (reloading the checkpoint, handing leases back) needed the store too:
        // once it answers, re-read where the lineage stands, then look again at once.
        const reloaded = await waitOutStore(() => trainer.reload(), storeWait('reload the last checkpoint'));
        if (reloaded.kind === 'stopped') break;
        continue;
      }
    }
    if (lastFailed) failures += 1;
    // Nothing consumed (every group stale or set aside) or a failure: give the rollouts, the fleet
    // or the judge a poll's time before looking again.
    if (lastFailed || report?.kind === 'idle') {
      if (!options.stopping()) await options.wait(options.pollMs);
    }
  }
  return { cycles, published, failures, lastFailed };
}
