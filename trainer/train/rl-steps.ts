// The GRPO cycle's step source (`edgerl train --once`): before the first step, hand back leases an
// earlier run held without a checkpoint and catch the fleet's replicas up on the published versions
// they lack; then per step, claim and score groups (prepare-step.ts), add the replayed successes
// (replay.ts), and take the step at the scheduled learning rate; up to --steps-per-cycle steps.
// Leaves out the driving (drive-cycle.ts) and publication (publish-checkpoint.ts).
import { redactSecrets } from '../../protocol/redact-secrets.ts';
import { describeRetention } from './retain-adapters.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { catchUpFleet, describeCatchUp } from './catch-up-fleet.ts';
import type { CycleContext, StepSource } from './step-source.ts';
import { scheduledLearningRate } from './lr-schedule.ts';
import { prepareStep, trajectoryNotes } from './prepare-step.ts';
import { replaySequences } from './replay.ts';
import { stepRecordMetrics } from './step-summary.ts';
import type { TrainerSession } from './trainer-session.ts';

export function rlSteps(): StepSource {
  /** Groups the judge failed in this cycle: judged again in a later one. */
  const unscored = new Set<string>();
  let calls = 0;
  return {
    mode: 'rl',
    async begin({ session }, at) {
      const { config, deps } = session;
      // Leases this owner holds but no checkpoint accounts for (a run killed mid-step): hand them back.
      const released = await deps.store.releaseOwnerLeases({
        owner: config.owner,
        except: at.pending?.state.groupIds ?? [],
      });
      if (released.length > 0)
        deps.progress.line(`released ${released.length} group(s) an earlier run had claimed but not trained`);
      await catchUp(session);
    },
    async next(context: CycleContext, lineage) {
      const { session, keeper } = context;
      const { config } = session;
      if (calls >= config.stepsPerCycle) return { kind: 'done', lineage, found: {} };
      const prepared = await prepareStep(session, keeper, lineage, unscored);
      if (!prepared) return { kind: 'done', lineage, found: {} };
      const found = { setAside: prepared.setAside, stale: prepared.stale.length };
      if (prepared.consumed.length === 0) return { kind: 'done', lineage: prepared.lineage, found };
      calls += 1;
      const consumed = {
        ...found,
        consumed: prepared.consumed,
        reasons: prepared.reasons,
        notes: trajectoryNotes(prepared.batch, prepared.staleness),
      };
      if (prepared.batch.sequences.length === 0)
        return { kind: 'consumed', lineage: prepared.lineage, found: consumed };
      // The schedule counts the optimiser's own steps (fresh moments after SFT restart its warm-up).
      const learningRate = scheduledLearningRate(
        config.loss.learningRate,
        session.engine.optimizerSteps + 1,
        config.lrSchedule,
      );
      const replayed = await replaySequences(session, prepared.lineage.step + 1, prepared.used);
      return {
        kind: 'step',
        lineage: prepared.lineage,
        found: consumed,
        step: {
          sequences: prepared.batch.sequences,
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
          learningRate,
          ...(replayed.length > 0 ? { replay: { sequences: replayed, weight: config.replay.weight } } : {}),
          groupIds: prepared.used,
          metrics: (result) =>
            stepRecordMetrics({
              groups: prepared.groups,
              batch: prepared.batch,
              result,
              maxGradNorm: config.loss.maxGradNorm,
              learningRate,
              staleness: { perTrajectory: prepared.staleness, staleGroups: prepared.stale.length },
            }),
        },
      };
    },
  };
}

/**
 * Loads the policy's published versions onto replicas that lack them (a restart, a quarantine)
 * before this cycle publishes another. A failure here is reported, never fatal: the cycle's own
 * publication reaches every replica it can anyway.
 */
async function catchUp(session: TrainerSession): Promise<void> {
  const { config, deps } = session;
  try {
    const reports = await catchUpFleet({
      store: deps.store,
      fleet: config.inference,
      policyName: config.policyName,
      servingDir: config.servingDir,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      onRetention: (report) => {
        for (const line of describeRetention(report)) deps.progress.line(line);
      },
    });
    for (const line of describeCatchUp(reports)) deps.progress.line(line);
  } catch (error) {
    deps.progress.line(redactSecrets(`catch-up failed: ${errorMessage(error)}`));
  }
}
