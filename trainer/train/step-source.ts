// Where a cycle's optimiser steps come from (rl-steps.ts, sft-steps.ts), and what the cycle's
// transitions share (drive-cycle.ts, publish-checkpoint.ts). Types only.
import type { CycleData, Lineage, PlannedStep, Position } from './cycle-state.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import type { TrainMode } from './train-config.ts';
import type { TrainerSession } from './trainer-session.ts';

/** What a cycle's transitions share: the session's resources, the cycle's leases and its source. */
export interface CycleContext {
  readonly session: TrainerSession;
  readonly keeper: LeaseKeeper;
  readonly source: StepSource;
}

/** What a step source found on one call: the next step, groups consumed without one, or the end. */
export type SourceTurn =
  | {
      readonly kind: 'step';
      readonly lineage: Lineage;
      readonly found: Partial<CycleData>;
      readonly step: PlannedStep;
    }
  | { readonly kind: 'consumed'; readonly lineage: Lineage; readonly found: Partial<CycleData> }
  | { readonly kind: 'done'; readonly lineage: Lineage; readonly found: Partial<CycleData> };

/** Where a cycle's optimiser steps come from; one per cycle (it keeps its own cursor). */
export interface StepSource {
  readonly mode: TrainMode;
  /** Before anything else, a pending checkpoint's publication too: hand back stray leases, catch up the fleet… */
  begin?(context: CycleContext, at: Position): Promise<void>;
  /** The next step after `stepsTaken` steps of this cycle, with the lineage it may have started a run on. */
  next(context: CycleContext, lineage: Lineage, stepsTaken: number): Promise<SourceTurn>;
  /** Only trajectories the store holds get notes (demonstrations do not). */
  readonly keepNote?: (trajectoryId: string) => boolean;
}
