// `--every`: a cycle every interval until SIGINT or SIGTERM, which stop it after the current cycle (a
// second signal exits at once). Exit status 1 when the last cycle failed or its publication did.
import { errorMessage } from '../../protocol/error-message.ts';
import type { CycleReport } from '../../trainer/train/cycle-state.ts';
import { describeCycle } from './describe-cycle.ts';
import { stopAfterCycle } from './stop-after-cycle.ts';

export async function repeatCycles(
  cycle: () => Promise<CycleReport>,
  everyMs: number,
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
): Promise<number> {
  const signals = stopAfterCycle(stderr);
  let failures = 0;
  try {
    while (!signals.stopping()) {
      const started = Date.now();
      try {
        const report = await cycle();
        stdout.write(`${describeCycle(report)}\n`);
        failures = report.kind === 'publish-failed' ? failures + 1 : 0;
      } catch (error) {
        failures += 1;
        stderr.write(`edgerl train: cycle failed: ${errorMessage(error)}\n`);
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
