// One GRPO cycle (`edgerl train --once`): catch the fleet's replicas up on the published versions
// they lack (catch-up-fleet.ts), finish a checkpoint left unpublished by an earlier run, then
// claim → score → advantages → token sequences → optimiser step(s) → checkpoint → publish → mark
// trained (finish-checkpoint.ts), with the leases renewed throughout. Nothing reaches the store as
// "trained" before the checkpoint holding it is on disk and the adapter serves; a failure or kill
// anywhere before leaves the groups to be taken again (the checkpoint, if written, is finished on the
// next run instead of training its groups again). Leaves out SFT (sft.ts) and scheduling (the CLI).
import { type StepRecord, writeCheckpoint } from './checkpoint.ts';
import { catchUpFleet, describeCatchUp } from './catch-up-fleet.ts';
import { type FinishOutcome, finishCheckpoint } from './finish-checkpoint.ts';
import { LeaseKeeper } from './lease-keeper.ts';
import { scheduledLearningRate } from './lr-schedule.ts';
import { prepareStep, trajectoryNotes } from './prepare-step.ts';
import { replaySequences } from './replay.ts';
import { formatStepLine, stepRecordMetrics } from './step-summary.ts';
import { trainStep } from './train-step.ts';
import type { TrainerSession } from './trainer-session.ts';
import { errorMessage } from '../../protocol/error-message.ts';

export type CycleReport =
  | {
      readonly kind: 'idle';
      readonly setAside: number;
      /** Groups skipped (and marked) for being beyond --max-off-policy-steps. */
      readonly stale: number;
    }
  | { readonly kind: 'no-signal'; readonly groupIds: string[]; readonly stale: number }
  | (FinishOutcome & { readonly steps: number; readonly resumed: boolean; readonly stale?: number });

export async function runCycle(session: TrainerSession): Promise<CycleReport> {
  const { config, deps } = session;
  const { store, progress } = deps;
  const keeper = new LeaseKeeper({
    renew: (groupIds) =>
      store.renewLease({ owner: config.owner, groupIds, leaseSeconds: config.leaseSeconds }),
    leaseSeconds: config.leaseSeconds,
    log: (line) => progress.line(line),
  });
  keeper.start();
  const setAside: string[] = [];
  try {
    // Leases this owner holds but no checkpoint accounts for (a run killed mid-step): hand them back.
    const keep = session.pending?.state.groupIds ?? [];
    const released = await store.releaseOwnerLeases({ owner: config.owner, except: keep });
    if (released.length > 0)
      progress.line(`released ${released.length} group(s) an earlier run had claimed but not trained`);

    await catchUp(session);
    const resumed = await finishPendingCheckpoint(session, keeper);
    if (resumed) return resumed;

    const steps: StepRecord[] = [];
    const consumed: string[] = [];
    const reasons: Record<string, string> = {};
    let notes: Record<string, Record<string, unknown>> = {};
    const unscored = new Set<string>();
    let stale = 0;
    for (let index = 0; index < config.stepsPerCycle; index++) {
      const prepared = await prepareStep(session, keeper, unscored);
      if (!prepared) break;
      setAside.push(...prepared.setAside);
      stale += prepared.stale.length;
      if (prepared.consumed.length === 0) break;
      consumed.push(...prepared.consumed);
      Object.assign(reasons, prepared.reasons);
      notes = { ...notes, ...trajectoryNotes(prepared.batch, prepared.staleness) };
      if (prepared.batch.sequences.length === 0) continue;
      const trainingRunId = await session.ensureTrainingRun();
      const step = session.lineage.step + 1;
      // The schedule counts this optimiser's own steps (fresh moments after SFT restart its warm-up).
      const learningRate = scheduledLearningRate(
        config.loss.learningRate,
        session.optimizer.step + 1,
        config.lrSchedule,
      );
      const replayed = await replaySequences(session, step, prepared.used);
      const started = performance.now();
      const startedAt = new Date().toISOString();
      const result = await trainStep(
        session.model,
        session.adapterName,
        session.optimizer,
        prepared.batch.sequences,
        {
          objective: {
            kind: 'grpo',
            loss: {
              lossKind: config.loss.lossKind,
              clip: config.loss.clip,
              aggregation: config.loss.aggregation,
              beta: config.loss.beta,
              ...(config.offPolicy.correction === 'tis'
                ? { correction: { kind: 'tis', cap: config.offPolicy.isCap } as const }
                : {}),
            },
          },
          microBatchTokens: config.loss.microBatchTokens,
          maxGradNorm: config.loss.maxGradNorm,
          learningRate,
          padTokenId: session.tokenizer.padTokenId,
          workers: session.workers,
          ...(replayed.length > 0 ? { replay: { sequences: replayed, weight: config.replay.weight } } : {}),
          onMicroBatch: (done, total, tokens) =>
            progress.microBatch(step, done, total, tokens, (performance.now() - started) / 1000),
        },
      );
      const finishedAt = new Date().toISOString();
      const metrics = stepRecordMetrics({
        groups: prepared.groups,
        batch: prepared.batch,
        result,
        maxGradNorm: config.loss.maxGradNorm,
        learningRate,
        staleness: { perTrajectory: prepared.staleness, staleGroups: prepared.stale.length },
      });
      session.lineage = { ...session.lineage, step, trainingRunId };
      steps.push({ step, metrics, groupIds: prepared.used, startedAt, finishedAt });
      progress.stepEnd(step, formatStepLine(step, metrics));
      await deps.hook?.('trained');
    }
    await releaseSetAside(session, setAside);
    setAside.length = 0;

    if (consumed.length === 0) return { kind: 'idle', setAside: 0, stale };
    await keeper.ensure();
    if (steps.length === 0) {
      // Only groups without signal: nothing to publish, but they are consumed and say why.
      await store.commitTrainingCycle({
        owner: config.owner,
        ...(session.lineage.trainingRunId ? { trainingRunId: session.lineage.trainingRunId } : {}),
        groupIds: consumed,
        groupReasons: reasons,
      });
      keeper.drop(consumed);
      progress.line(
        `${consumed.length} group(s) had no reward spread: marked trained (no-signal), nothing to publish`,
      );
      return { kind: 'no-signal', groupIds: consumed, stale };
    }

    const checkpoint = await writeCheckpoint(config.outputDir, {
      model: session.model,
      adapterName: session.adapterName,
      optimizer: session.optimizer,
      state: {
        formatVersion: 1,
        kind: 'rl',
        step: session.lineage.step,
        trainingRunId: session.lineage.trainingRunId as string,
        policyId: session.policy.id,
        parentVersionId: session.lineage.parentVersionId,
        groupIds: consumed,
        groupReasons: reasons,
        trajectoryNotes: notes,
        steps,
        configHash: session.configHash,
        createdAt: new Date().toISOString(),
      },
    });
    session.pending = checkpoint;
    progress.line(`checkpoint ${checkpoint.dir}`);
    await deps.hook?.('checkpointed');
    const outcome = await finishCheckpoint(session, checkpoint, keeper);
    reportFinish(session, outcome);
    return { ...outcome, steps: steps.length, resumed: false, stale };
  } catch (error) {
    // Drop what this cycle changed in memory; leases not covered by a checkpoint go back.
    await session
      .restore()
      .catch((restoreError: unknown) =>
        progress.line(`could not reload the last checkpoint: ${errorMessage(restoreError)}`),
      );
    const keep = new Set(session.pending?.state.groupIds ?? []);
    const release = [...keeper.held, ...setAside].filter((groupId) => !keep.has(groupId));
    if (release.length > 0) {
      await store.releaseGroups({ owner: config.owner, groupIds: release }).catch(() => undefined);
    }
    throw error;
  } finally {
    keeper.stop();
  }
}

/**
 * Loads the policy's published versions onto replicas that lack them (a restart, a quarantine)
 * before this cycle publishes another. A failure here is reported, never fatal: the cycle's own
 * publication reaches every replica it can anyway.
 */
export async function catchUp(session: TrainerSession): Promise<void> {
  const { config, deps } = session;
  try {
    const reports = await catchUpFleet({
      store: deps.store,
      fleet: config.inference,
      policyName: config.policyName,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
    for (const line of describeCatchUp(reports)) deps.progress.line(line);
  } catch (error) {
    deps.progress.line(`catch-up failed: ${errorMessage(error)}`);
  }
}

async function releaseSetAside(session: TrainerSession, groupIds: string[]): Promise<void> {
  if (groupIds.length === 0) return;
  await session.deps.store.releaseGroups({ owner: session.config.owner, groupIds });
}

/**
 * Publishes the checkpoint an earlier run wrote but did not publish (it was killed in between), so
 * its groups are not trained again. Undefined when there is none, or when it was discarded because
 * its groups went to another trainer.
 */
export async function finishPendingCheckpoint(
  session: TrainerSession,
  keeper: LeaseKeeper,
): Promise<CycleReport | undefined> {
  const pending = session.pending;
  if (!pending) return undefined;
  session.deps.progress.line(
    `finishing checkpoint ${pending.state.step} (written by an earlier run, not yet published)`,
  );
  const outcome = await finishCheckpoint(session, pending, keeper);
  reportFinish(session, outcome);
  return outcome.kind === 'discarded'
    ? undefined
    : { ...outcome, steps: pending.state.steps.length, resumed: true };
}

/** ` on 2 of 3 replicas` for a fleet; nothing for a single endpoint that took it. */
function fleetNote(session: TrainerSession, replicas: readonly string[]): string {
  const fleet = session.config.inference.replicas.length;
  return fleet === 1 ? '' : ` on ${replicas.length} of ${fleet} replicas`;
}

export function reportFinish(session: TrainerSession, outcome: FinishOutcome): void {
  const { progress } = session.deps;
  switch (outcome.kind) {
    case 'published':
      progress.line(
        `published ${outcome.adapterName} (${outcome.groupIds.length} group(s)) at ${outcome.adapterUri}${fleetNote(session, outcome.replicas)}${session.config.publish.makeDefault ? '; now the default' : ''}`,
      );
      break;
    case 'publish-failed':
      progress.line(
        `publication of ${outcome.adapterName} failed at ${outcome.stage}: ${outcome.reason}; the previous version keeps serving, the next run retries`,
      );
      break;
    case 'discarded':
      break;
  }
}
