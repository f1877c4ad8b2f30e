// A trainer: its session's fixed resources and the position its lineage stands at, which only the
// cycle driver's outcomes replace (drive-cycle.ts). `runCycle` is one GRPO cycle (`edgerl train
// --once`), `runSft` one supervised warm-up (`--sft`); both are the same driver with another step
// source. Leaves out scheduling (run-continuous.ts, the CLI).
import type { CycleReport, Position } from './cycle-state.ts';
import { driveCycle } from './drive-cycle.ts';
import { rlSteps } from './rl-steps.ts';
import { type SftHooks, sftSteps } from './sft-steps.ts';
import type { StepSource } from './step-source.ts';
import type { TrainConfig } from './train-config.ts';
import { type RunEnd, type TrainerDeps, TrainerSession } from './trainer-session.ts';

export class Trainer {
  readonly session: TrainerSession;
  #position: Position;

  private constructor(session: TrainerSession, position: Position) {
    this.session = session;
    this.#position = position;
  }

  /** Opens the session and resumes the lineage from the output directory's newest checkpoint. */
  static async open(config: TrainConfig, deps: TrainerDeps): Promise<Trainer> {
    const session = await TrainerSession.open(config, deps);
    try {
      return new Trainer(session, await session.resume());
    } catch (error) {
      await session.abandon();
      throw error;
    }
  }

  /** Where the lineage stands: the last cycle's outcome (or what open read from disk). */
  get position(): Position {
    return this.#position;
  }

  /** One cycle of `source`'s steps; a failed cycle leaves the position the disk holds and rethrows. */
  async cycle(source: StepSource): Promise<CycleReport> {
    const outcome = await driveCycle(this.session, this.#position, source);
    this.#position = outcome.position;
    if (outcome.kind === 'failed') throw outcome.error;
    reportFinish(this.session, outcome.report);
    return outcome.report;
  }

  /**
   * Re-reads where the lineage stands (disk and store) and hands back the group leases no pending
   * checkpoint accounts for: after a cycle that failed because the store was unreachable, whose own
   * clean-up (the same two things) needed the store too.
   */
  async reload(): Promise<void> {
    const position = await this.session.resume();
    const { store } = this.session.deps;
    await store.releaseOwnerLeases({
      owner: this.session.config.owner,
      except: position.pending?.state.groupIds ?? [],
    });
    this.#position = position;
  }

  /** Ends the runs this process started as `end` says and gives the leases back; once. */
  end(end: RunEnd): Promise<void> {
    return this.session.end(end, this.#position);
  }

  async close(end: RunEnd = { status: 'finished' }): Promise<void> {
    await this.session.close(end, this.#position);
  }
}

/** One GRPO cycle: claim → score → step(s) → checkpoint → publish (rl-steps.ts). */
export function runCycle(trainer: Trainer): Promise<CycleReport> {
  return trainer.cycle(rlSteps());
}

/** One supervised warm-up: the demonstrations' epochs → checkpoint → publish (sft-steps.ts). */
export function runSft(trainer: Trainer, hooks: SftHooks = {}): Promise<CycleReport> {
  return trainer.cycle(sftSteps(hooks));
}

/** ` on 2 of 3 replicas` for a fleet; nothing for a single endpoint that took it. */
function fleetNote(session: TrainerSession, replicas: readonly string[]): string {
  const fleet = session.config.inference.replicas.length;
  return fleet === 1 ? '' : ` on ${replicas.length} of ${fleet} replicas`;
}

function reportFinish(session: TrainerSession, report: CycleReport): void {
  const { progress } = session.deps;
  switch (report.kind) {
    case 'published':
      progress.line(
        `published ${report.adapterName} (${report.groupIds.length} group(s)) at ${report.adapterUri}${fleetNote(session, report.replicas)}${session.config.publish.makeDefault ? '; now the default' : ''}`,
      );
      break;
    case 'publish-failed':
      progress.line(
        `publication of ${report.adapterName} failed at ${report.stage}: ${report.reason}; the previous version keeps serving, the next run retries`,
      );
      break;
    case 'discarded':
    case 'idle':
    case 'no-signal':
      break;
  }
}
