// The training cycle as tagged states (drive-cycle.ts runs them): where the adapter lineage stands
// between cycles (Position), what a cycle has gathered so far, each phase's state and the reports a
// cycle ends with. Types only.
//
//   started ─▶ claimed ─▶ trained ─┬─▶ claimed …            (one optimiser step per claimed batch)
//      │                           └─▶ checkpointed ─▶ registered ─▶ published ─▶ committed
//      └─▶ idle | no-signal                                  │            │
//                                         discarded ◀────────┴── publish-failed (kept pending)
// A cycle that finds a checkpoint left pending by an earlier run starts at `checkpointed`.
import type { EngineStepResult } from '../engine/train-engine.ts';
import type { TrainingSequence } from '../engine/training-sequence.ts';
import type { Objective } from '../grpo/objective-loss.ts';
import type { Checkpoint, StepRecord } from './checkpoint.ts';
import type { PublishStage } from './publish.ts';
import type { TrainMode } from './train-config.ts';

/** The adapter lineage: how many steps it took, under which run, and the version it descends from. */
export interface Lineage {
  /** Optimiser steps taken so far (the next checkpoint is step + its steps). */
  readonly step: number;
  readonly trainingRunId: string | undefined;
  readonly runConfigHash: string | undefined;
  readonly runKind: TrainMode | undefined;
  /** The version the next published one descends from. */
  readonly parentVersionId: string | null;
}

/** Where a trainer stands between cycles: read from its checkpoints at open, returned by every cycle. */
export interface Position {
  readonly lineage: Lineage;
  /** The newest checkpoint when it is not committed yet: it is published before anything new trains. */
  readonly pending: Checkpoint | undefined;
}

/** What a cycle has gathered so far; a checkpoint records it. */
export interface CycleData {
  readonly steps: readonly StepRecord[];
  /** Groups consumed: trained into these weights, or without signal (with a reason). */
  readonly consumed: readonly string[];
  readonly reasons: Readonly<Record<string, string>>;
  /** Per-trajectory notes for the store (tokenization drift, staleness). */
  readonly notes: Readonly<Record<string, Record<string, unknown>>>;
  /** Claimed but not trainable in this mode: handed back when the steps are done. */
  readonly setAside: readonly string[];
  /** Groups skipped (and marked) for being beyond --max-off-policy-steps. */
  readonly stale: number;
}

export const noData: CycleData = { steps: [], consumed: [], reasons: {}, notes: {}, setAside: [], stale: 0 };

/** One optimiser step's input, as a step source plans it. */
export interface PlannedStep {
  readonly sequences: readonly TrainingSequence[];
  readonly objective: Objective;
  readonly learningRate: number;
  readonly replay?: { readonly sequences: readonly TrainingSequence[]; readonly weight: number };
  /** Groups whose sequences are in the step. */
  readonly groupIds: readonly string[];
  /** The step record's metrics once the engine has taken it. */
  readonly metrics: (result: EngineStepResult) => Record<string, number>;
}

export type Published = {
  readonly kind: 'published';
  readonly adapterName: string;
  readonly versionId: string;
  readonly version: number;
  readonly adapterUri: string;
  readonly groupIds: string[];
  readonly experimentId?: string;
  /** The replicas it was committed with (its `ready` rows). */
  readonly replicas: readonly string[];
};

export type PublishFailed = {
  readonly kind: 'publish-failed';
  readonly adapterName: string;
  readonly stage: PublishStage;
  readonly reason: string;
};

export type Discarded = { readonly kind: 'discarded'; readonly reason: string };

/** How the publication of a checkpoint ended. */
export type FinishOutcome = Published | PublishFailed | Discarded;

/** A checkpoint that has its version registered (publication.json beside it). */
export type RegisteredCheckpoint = Checkpoint & {
  readonly publication: NonNullable<Checkpoint['publication']>;
};

/** What every phase from the checkpoint on carries. */
export interface Publishing {
  readonly lineage: Lineage;
  /** Written by an earlier run (killed before publishing it), not by this cycle. */
  readonly resumed: boolean;
  /** Groups this cycle skipped as stale before training (0 for a resumed checkpoint). */
  readonly stale: number;
}

/** The phases of a cycle. Each carries the lineage; from `checkpointed` on, the checkpoint. */
export type CycleState =
  | { readonly kind: 'started'; readonly lineage: Lineage; readonly data: CycleData }
  | {
      readonly kind: 'claimed';
      readonly lineage: Lineage;
      readonly data: CycleData;
      readonly planned: PlannedStep;
    }
  | { readonly kind: 'trained'; readonly lineage: Lineage; readonly data: CycleData }
  | (Publishing & { readonly kind: 'checkpointed'; readonly checkpoint: Checkpoint })
  | (Publishing & { readonly kind: 'registered'; readonly checkpoint: RegisteredCheckpoint })
  | (Publishing & {
      readonly kind: 'published';
      readonly checkpoint: RegisteredCheckpoint;
      /** The path replicas loaded it from, and the replicas that verified it. */
      readonly fleet: { readonly adapterPath: string; readonly acknowledged: readonly string[] };
    })
  // Terminal:
  | (Publishing & { readonly kind: 'committed'; readonly steps: number; readonly outcome: Published })
  | (Publishing & {
      readonly kind: 'publish-failed';
      readonly checkpoint: RegisteredCheckpoint;
      readonly outcome: PublishFailed;
    })
  | (Publishing & { readonly kind: 'discarded'; readonly steps: number; readonly outcome: Discarded })
  | { readonly kind: 'idle'; readonly lineage: Lineage; readonly stale: number }
  | {
      readonly kind: 'no-signal';
      readonly lineage: Lineage;
      readonly groupIds: string[];
      readonly stale: number;
    };

export type CycleStateKind = CycleState['kind'];
export type StateOf<K extends CycleStateKind> = Extract<CycleState, { readonly kind: K }>;

export const terminalKinds = ['committed', 'publish-failed', 'discarded', 'idle', 'no-signal'] as const;
export type TerminalKind = (typeof terminalKinds)[number];
export type ActiveKind = Exclude<CycleStateKind, TerminalKind>;

/** What `edgerl train` reports of a cycle. */
export type CycleReport =
  | {
      readonly kind: 'idle';
      readonly setAside: number;
      /** Groups skipped (and marked) for being beyond --max-off-policy-steps. */
      readonly stale: number;
    }
  | { readonly kind: 'no-signal'; readonly groupIds: string[]; readonly stale: number }
  | (FinishOutcome & { readonly steps: number; readonly resumed: boolean; readonly stale?: number });
