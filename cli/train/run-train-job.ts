// The `edgerl train` job once its settings are read: the backend, the store, the trainer session, then
// one cycle (RL or SFT) or `--every`'s schedule. Exit status 1 when publication failed.
import { openStore } from '../../db/drivers/open-store.ts';
import type { StoreConfig } from '../../db/drivers/store-config.ts';
import { selectBackend } from '../../model/backend.ts';
import { createProgress, type ProgressStream } from '../../trainer/train/progress.ts';
import { runCycle } from '../../trainer/train/run-cycle.ts';
import { runSft } from '../../trainer/train/sft.ts';
import type { TrainConfig } from '../../trainer/train/train-config.ts';
import { type TrainerDeps, TrainerSession } from '../../trainer/train/trainer-session.ts';
import { describeCycle } from './describe-cycle.ts';
import { repeatCycles } from './repeat-cycles.ts';

export interface TrainJob {
  readonly config: TrainConfig;
  /** Undefined: one cycle. */
  readonly everyMs: number | undefined;
  readonly store: StoreConfig;
  readonly backend: string | undefined;
  readonly judge: TrainerDeps['judge'];
  readonly hook: TrainerDeps['hook'];
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

export async function runTrainJob(job: TrainJob): Promise<number> {
  const { config, stdout, stderr } = job;
  await selectBackend({ requested: job.backend, log: (line) => stderr.write(`${line}\n`) });
  const store = await openStore({ url: job.store.url, dataDir: job.store.dataDir });
  let session: TrainerSession | undefined;
  try {
    session = await TrainerSession.open(config, {
      store,
      progress: createProgress(stderr as unknown as ProgressStream),
      ...(job.judge ? { judge: job.judge } : {}),
      ...(job.hook ? { hook: job.hook } : {}),
    });
    const opened = session;
    const cycle = () => (config.mode === 'sft' ? runSft(opened) : runCycle(opened));
    if (job.everyMs === undefined) {
      const report = await cycle();
      stdout.write(`${describeCycle(report)}\n`);
      return report.kind === 'publish-failed' ? 1 : 0;
    }
    return await repeatCycles(cycle, job.everyMs, stdout, stderr);
  } finally {
    await session?.close();
    await store.close();
  }
}
