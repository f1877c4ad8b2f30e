// The `edgerl train` job once its settings are read: the backend, the store, the trainer session, then
// one cycle (RL or SFT), `--every`'s schedule or `--continuous`. Exit status 1 when publication failed, 3 when another
// trainer holds the policy's lease. The training runs it started end finished, failed (an error) or
// interrupted (SIGINT/SIGTERM, or --max-store-wait giving up on an unreachable store).
import { openStore } from '../../db/drivers/open-store.ts';
import type { StoreConfig } from '../../db/drivers/store-config.ts';
import { selectBackend } from '../../model/backend.ts';
import { createProgress, type ProgressStream } from '../../trainer/train/progress.ts';
import type { TrainConfig } from '../../trainer/train/train-config.ts';
import { trainedSplits } from '../../trainer/train/prepare-step.ts';
import { runCycle, runSft, Trainer } from '../../trainer/train/trainer.ts';
import { PolicyLeasedError, type RunEnd, type TrainerDeps } from '../../trainer/train/trainer-session.ts';
import { StoreWaitExceededError } from '../../trainer/train/wait-out-store.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import type { CycleReport } from '../../trainer/train/cycle-state.ts';
import { cycleJson } from './cycle-json.ts';
import { describeCycle, describeUnclaimable } from './describe-cycle.ts';
import { repeatCycles } from './repeat-cycles.ts';
import { trainContinuously } from './train-continuously.ts';

export interface TrainJob {
  readonly config: TrainConfig;
  /** Undefined: one cycle. */
  readonly everyMs: number | undefined;
  readonly store: StoreConfig;
  readonly backend: string | undefined;
  readonly judge: TrainerDeps['judge'];
  readonly hook: TrainerDeps['hook'];
  /** One JSON object per cycle on stdout (JSON lines) instead of a sentence. */
  readonly json: boolean;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** Another trainer holds the policy's lease (EX_TEMPFAIL would be 75; 3 keeps to small codes). */
export const policyLeasedExitCode = 3;

export async function runTrainJob(job: TrainJob): Promise<number> {
  const { config, stdout, stderr } = job;
  await selectBackend({ requested: job.backend, log: (line) => stderr.write(`${line}\n`) });
  const store = await openStore({ url: job.store.url, dataDir: job.store.dataDir });
  let trainer: Trainer | undefined;
  let end: RunEnd = { status: 'finished' };
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled = signal;
    // --every and --continuous stop after the current cycle (repeat-cycles.ts,
    // train-continuously.ts); --once ends its runs and exits now.
    if (job.everyMs !== undefined || config.continuous) return;
    stderr.write(`edgerl train: ${signal}: stopping\n`);
    const exit = () => process.exit(signal === 'SIGINT' ? 130 : 143);
    void (
      trainer?.end({ status: 'interrupted', reason: `stopped by ${signal}` }) ?? Promise.resolve()
    ).finally(exit);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    try {
      trainer = await Trainer.open(config, {
        store,
        progress: createProgress(stderr as unknown as ProgressStream),
        ...(job.judge ? { judge: job.judge } : {}),
        ...(job.hook ? { hook: job.hook } : {}),
      });
    } catch (error) {
      if (!(error instanceof PolicyLeasedError)) throw error;
      stderr.write(`edgerl train: ${error.message}; exiting without training\n`);
      return policyLeasedExitCode;
    }
    const opened = trainer;
    const cycle = () => (config.mode === 'sft' ? runSft(opened) : runCycle(opened));
    const describe = job.json ? (report: CycleReport) => cycleJson(report) : describeCycle;
    if (config.continuous) {
      const code = await trainContinuously(opened, stdout, stderr, describe);
      if (signalled) end = { status: 'interrupted', reason: `stopped by ${signalled}` };
      return code;
    }
    if (job.everyMs === undefined) {
      const report = await cycle();
      const { policy } = opened.session;
      const unclaimable =
        report.kind === 'idle'
          ? await store.unclaimableGroups({ policyId: policy.id, splits: [...trainedSplits] })
          : undefined;
      if (job.json) stdout.write(`${cycleJson(report, unclaimable)}\n`);
      else {
        stdout.write(`${describeCycle(report)}\n`);
        if (unclaimable)
          for (const line of describeUnclaimable(unclaimable, policy.name)) stdout.write(`${line}\n`);
      }
      return report.kind === 'publish-failed' ? 1 : 0;
    }
    const code = await repeatCycles(
      cycle,
      job.everyMs,
      stdout,
      stderr,
      { settings: config.storeWait, reload: () => opened.reload() },
      describe,
    );
    if (signalled) end = { status: 'interrupted', reason: `stopped by ${signalled}` };
    return code;
  } catch (error) {
    // Giving up on an unreachable store is no fault of the run: it stopped, as a signal would stop it.
    end =
      error instanceof StoreWaitExceededError
        ? { status: 'interrupted', reason: errorMessage(error) }
        : { status: 'failed', reason: errorMessage(error) };
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await trainer?.close(end);
    await store.close();
  }
}
