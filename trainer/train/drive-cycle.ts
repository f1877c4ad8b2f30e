// The one driver of a training cycle, RL and SFT alike: from a Position it runs the states of
// cycle-state.ts through their transitions until a terminal one, pausing at the test hook after
// each state it enters. What is trained comes from a StepSource (rl-steps.ts claims and scores
// groups; sft-steps.ts walks demonstrations in epochs); publication is publish-checkpoint.ts.
// Nothing reaches the store as "trained" before the checkpoint holding it is on disk and the adapter
// serves; a failure or kill anywhere before leaves the groups to be taken again (a written checkpoint
// is finished by the next cycle instead of training its groups again). Leaves out scheduling.
import { errorMessage } from '../../protocol/error-message.ts';
import { assertNever } from '../../protocol/statuses.ts';
import { writeCheckpoint } from './checkpoint.ts';
import {
  type ActiveKind,
  type CycleData,
  type CycleReport,
  type CycleState,
  type Lineage,
  noData,
  type Position,
  type StateOf,
  type TerminalKind,
  terminalKinds,
} from './cycle-state.ts';
import { LeaseKeeper } from './lease-keeper.ts';
import { commitCheckpoint, publishCheckpoint, registerCheckpoint } from './publish-checkpoint.ts';
import { formatStepLine } from './step-summary.ts';
import type { CycleContext, StepSource } from './step-source.ts';
import { type HookPoint, stateHookPoints, type TrainerSession } from './trainer-session.ts';

/** How a cycle ended, and where the lineage stands after it (after a failure: re-read from disk). */
export type CycleOutcome =
  | { readonly kind: 'finished'; readonly report: CycleReport; readonly position: Position }
  | { readonly kind: 'failed'; readonly error: unknown; readonly position: Position };

function isTerminal(state: CycleState): state is StateOf<TerminalKind> {
  return (terminalKinds as readonly string[]).includes(state.kind);
}

export async function driveCycle(
  session: TrainerSession,
  start: Position,
  source: StepSource,
): Promise<CycleOutcome> {
  const { config, deps } = session;
  const { store, progress } = deps;
  const keeper = new LeaseKeeper({
    renew: (groupIds) =>
      store.renewLease({ owner: config.owner, groupIds, leaseSeconds: config.leaseSeconds }),
    leaseSeconds: config.leaseSeconds,
    log: (line) => progress.line(line),
  });
  keeper.start();
  const context: CycleContext = { session, keeper, source };
  let position = start;
  let setAside: readonly string[] = [];
  try {
    await source.begin?.(context, position);
    let state: CycleState = position.pending
      ? pendingState(position, progress)
      : { kind: 'started', lineage: position.lineage, data: noData };
    for (;;) {
      // Groups set aside are handed back when the steps end (endSteps); until then a failure does.
      setAside = 'data' in state ? state.data.setAside : [];
      if (isTerminal(state)) {
        if (state.kind === 'discarded' && state.resumed) {
          // The earlier run's checkpoint lost its groups to another trainer: train afresh from disk.
          position = await session.resume();
          state = { kind: 'started', lineage: position.lineage, data: noData };
          continue;
        }
        return { kind: 'finished', ...(await finish(state, session)) };
      }
      state = await step(state, context);
      if ((stateHookPoints as readonly string[]).includes(state.kind))
        await deps.hook?.(state.kind as HookPoint);
    }
  } catch (error) {
    // Drop what this cycle changed in memory; leases not covered by a checkpoint go back.
    const restored = await session.resume().catch((restoreError: unknown) => {
      progress.line(`could not reload the last checkpoint: ${errorMessage(restoreError)}`);
      return position;
    });
    const keep = new Set(restored.pending?.state.groupIds ?? []);
    const release = [...keeper.held, ...setAside].filter((groupId) => !keep.has(groupId));
    if (release.length > 0) {
      await store.releaseGroups({ owner: config.owner, groupIds: release }).catch(() => undefined);
    }
    return { kind: 'failed', error, position: restored };
  } finally {
    keeper.stop();
  }
}

/** The transition out of each active state. */
function step(state: StateOf<ActiveKind>, context: CycleContext): Promise<CycleState> {
  switch (state.kind) {
    case 'started':
    case 'trained':
      return claim(state.lineage, state.data, context);
    case 'claimed':
      return train(state, context);
    case 'checkpointed':
      return registerCheckpoint(state, context);
    case 'registered':
      return publishCheckpoint(state, context);
    case 'published':
      return commitCheckpoint(state, context);
    default:
      return assertNever(state, 'cycle state');
  }
}

function pendingState(position: Position, progress: TrainerSession['deps']['progress']): CycleState {
  const checkpoint = position.pending as NonNullable<Position['pending']>;
  progress.line(
    `finishing checkpoint ${checkpoint.state.step} (written by an earlier run, not yet published)`,
  );
  return { kind: 'checkpointed', lineage: position.lineage, checkpoint, resumed: true, stale: 0 };
}

/** Asks the source for the next step (gathering what it consumes on the way), or ends the steps. */
async function claim(lineage: Lineage, data: CycleData, context: CycleContext): Promise<CycleState> {
  let current = lineage;
  let gathered = data;
  for (;;) {
    const turn = await context.source.next(context, current, gathered.steps.length);
    current = turn.lineage;
    gathered = merge(gathered, turn.found);
    switch (turn.kind) {
      case 'step':
        return { kind: 'claimed', lineage: current, data: gathered, planned: turn.step };
      case 'consumed':
        continue;
      case 'done':
        return endSteps(current, gathered, context);
      default:
        return assertNever(turn, 'source turn');
    }
  }
}

/** One optimiser step on the engine, recorded in the cycle's data (the store learns of it at publication). */
async function train(state: StateOf<'claimed'>, context: CycleContext): Promise<CycleState> {
  const { session } = context;
  const { config, deps, engine } = session;
  const lineage = await session.ensureTrainingRun(state.lineage);
  const planned = state.planned;
  const number = lineage.step + 1;
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const result = await engine.step(
    {
      sequences: planned.sequences,
      objective: planned.objective,
      microBatchTokens: config.loss.microBatchTokens,
      maxGradNorm: config.loss.maxGradNorm,
      learningRate: planned.learningRate,
      padTokenId: session.tokenizer.padTokenId,
      ...(planned.replay ? { replay: planned.replay } : {}),
    },
    (done, total, tokens) =>
      deps.progress.microBatch(number, done, total, tokens, (performance.now() - started) / 1000),
  );
  const metrics = planned.metrics(result);
  deps.progress.stepEnd(number, formatStepLine(number, metrics));
  const record = {
    step: number,
    metrics,
    groupIds: [...planned.groupIds],
    startedAt,
    finishedAt: new Date().toISOString(),
  };
  return {
    kind: 'trained',
    lineage: { ...lineage, step: number },
    data: { ...state.data, steps: [...state.data.steps, record] },
  };
}

/** After the last step: the groups set aside go back, then a checkpoint, or a cycle with nothing to publish. */
async function endSteps(lineage: Lineage, data: CycleData, context: CycleContext): Promise<CycleState> {
  const { session, keeper, source } = context;
  const { config, deps } = session;
  const { store, progress } = deps;
  if (data.setAside.length > 0)
    await store.releaseGroups({ owner: config.owner, groupIds: [...data.setAside] });
  const cleared = { ...data, setAside: [] };
  if (cleared.consumed.length === 0 && cleared.steps.length === 0) {
    return { kind: 'idle', lineage, stale: cleared.stale };
  }
  if (cleared.steps.length === 0) {
    // Only groups without signal: nothing to publish, but they are consumed and say why.
    await keeper.ensure();
    await store.commitTrainingCycle({
      owner: config.owner,
      ...(lineage.trainingRunId ? { trainingRunId: lineage.trainingRunId } : {}),
      groupIds: [...cleared.consumed],
      groupReasons: cleared.reasons,
    });
    keeper.drop(cleared.consumed);
    progress.line(
      `${cleared.consumed.length} group(s) had no reward spread: marked trained (no-signal), nothing to publish`,
    );
    return { kind: 'no-signal', lineage, groupIds: [...cleared.consumed], stale: cleared.stale };
  }
  if (cleared.consumed.length > 0) await keeper.ensure();
  const keepNote = source.keepNote;
  const checkpoint = await writeCheckpoint(config.outputDir, {
    engine: session.engine,
    state: {
      formatVersion: 1,
      kind: source.mode,
      step: lineage.step,
      trainingRunId: lineage.trainingRunId as string,
      policyId: session.policy.id,
      parentVersionId: lineage.parentVersionId,
      groupIds: [...cleared.consumed],
      groupReasons: cleared.reasons,
      trajectoryNotes: keepNote
        ? Object.fromEntries(Object.entries(cleared.notes).filter(([id]) => keepNote(id)))
        : cleared.notes,
      steps: [...cleared.steps],
      configHash: session.configHash,
      engine: session.engine.kind,
      createdAt: new Date().toISOString(),
    },
  });
  progress.line(`checkpoint ${checkpoint.dir}`);
  return { kind: 'checkpointed', lineage, checkpoint, resumed: false, stale: cleared.stale };
}

function merge(data: CycleData, found: Partial<CycleData>): CycleData {
  return {
    steps: [...data.steps, ...(found.steps ?? [])],
    consumed: [...data.consumed, ...(found.consumed ?? [])],
    reasons: { ...data.reasons, ...found.reasons },
    notes: { ...data.notes, ...found.notes },
    setAside: [...data.setAside, ...(found.setAside ?? [])],
    stale: data.stale + (found.stale ?? 0),
  };
}

/** The report of a terminal state, and the position after it. */
async function finish(
  state: StateOf<TerminalKind>,
  session: TrainerSession,
): Promise<{ readonly report: CycleReport; readonly position: Position }> {
  switch (state.kind) {
    case 'idle':
      return {
        report: { kind: 'idle', setAside: 0, stale: state.stale },
        position: { lineage: state.lineage, pending: undefined },
      };
    case 'no-signal':
      return {
        report: { kind: 'no-signal', groupIds: state.groupIds, stale: state.stale },
        position: { lineage: state.lineage, pending: undefined },
      };
    case 'committed':
      return {
        report: { ...state.outcome, steps: state.steps, resumed: state.resumed, ...staleOf(state) },
        position: { lineage: state.lineage, pending: undefined },
      };
    case 'publish-failed':
      return {
        report: {
          ...state.outcome,
          steps: state.checkpoint.state.steps.length,
          resumed: state.resumed,
          ...staleOf(state),
        },
        position: { lineage: state.lineage, pending: state.checkpoint },
      };
    case 'discarded':
      // The checkpoint moved aside: the lineage stands where the disk says.
      return {
        report: { ...state.outcome, steps: state.steps, resumed: state.resumed, ...staleOf(state) },
        position: await session.resume(),
      };
    default:
      return assertNever(state, 'terminal state');
  }
}

/** A fresh cycle reports the groups it skipped as stale; a resumed checkpoint reports none. */
function staleOf(state: { readonly resumed: boolean; readonly stale: number }): { stale?: number } {
  return state.resumed ? {} : { stale: state.stale };
}
