// `--continuous`: runContinuous until SIGINT or SIGTERM, which stop it after the current cycle (a
// second signal exits at once), one line per cycle. Exit status 1 when the last cycle failed or its
// publication did.
import type { CycleReport } from '../../trainer/train/cycle-state.ts';
import { runContinuous } from '../../trainer/train/run-continuous.ts';
import type { Trainer } from '../../trainer/train/trainer.ts';
import { describeCycle } from './describe-cycle.ts';
import { describeCycleFailure } from './describe-cycle-failure.ts';
import { stopAfterCycle } from './stop-after-cycle.ts';

/** How often a waiting trainer looks for complete groups: a step's worth rarely lands faster. */
const pollMs = 2000;

export async function trainContinuously(
  trainer: Trainer,
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
  /** The line printed per cycle: text, or `--json`'s object. */
  describe: (report: CycleReport) => string = describeCycle,
): Promise<number> {
  const signals = stopAfterCycle(stderr);
  try {
    stderr.write(
      `edgerl train: continuous: a cycle whenever ${trainer.session.config.groupsPerStep} complete group(s) wait; SIGINT or SIGTERM stops\n`,
    );
    const outcome = await runContinuous(trainer, {
      stopping: signals.stopping,
      pollMs,
      wait: signals.wait,
      onCycle: (report) => {
        if (report.kind !== 'idle' || report.stale > 0) stdout.write(`${describe(report)}\n`);
      },
      onError: (error) => stderr.write(`edgerl train: ${describeCycleFailure(error)}\n`),
    });
    return outcome.lastFailed ? 1 : 0;
  } finally {
    signals.dispose();
  }
}
