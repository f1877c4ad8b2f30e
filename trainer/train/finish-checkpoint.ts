// Takes a written checkpoint to a published policy version, in an order a kill can interrupt anywhere:
//   1. hold its groups (taken back after a restart; if another trainer took any, the checkpoint is
//      discarded, since publishing it would train those groups twice),
//   2. record its steps (a step recorded before is skipped),
//   3. register the version (`training`) and note it beside the checkpoint,
//   4. publish the adapter to the fleet (copy once; load, /v1/models and a probe on every replica;
//      each replica's row in `publications` says how far it got),
//   5. in ONE transaction: the replicas that verified it `ready`, version published (+ default),
//      groups trained, drift notes,
//   6. mark the checkpoint committed; optionally open an A/B experiment.
// A failed publication (fewer than --min-replicas verified it) stops after 4 with the reason on the
// version; the previous version keeps serving and the next cycle tries again before training anything
// new. A replica that failed while enough others verified is quarantined for the version and caught
// up later (catch-up-fleet.ts).
import { isStoreError } from '../../db/errors.ts';
import {
  type Checkpoint,
  discardCheckpoint,
  listCheckpoints,
  pruneCheckpoints,
  writeCommit,
  writePublication,
} from './checkpoint.ts';
import { abTestName } from './ab-test-name.ts';
import { versionsToKeep } from './best-version.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import type { PublishStage } from './publish.ts';
import { type FleetPublishOutcome, publishToFleet } from './publish-fleet.ts';
import type { TrainerSession } from './trainer-session.ts';
import { errorMessage } from '../../protocol/error-message.ts';

export type FinishOutcome =
  | {
      readonly kind: 'published';
      readonly adapterName: string;
      readonly versionId: string;
      readonly version: number;
      readonly adapterUri: string;
      readonly groupIds: string[];
      readonly experimentId?: string;
      /** The replicas it was committed with (its `ready` rows). */
      readonly replicas: readonly string[];
    }
  | {
      readonly kind: 'publish-failed';
      readonly adapterName: string;
      readonly stage: PublishStage;
      readonly reason: string;
    }
  | { readonly kind: 'discarded'; readonly reason: string };

export async function finishCheckpoint(
  session: TrainerSession,
  start: Checkpoint,
  keeper: LeaseKeeper,
): Promise<FinishOutcome> {
  const { config, deps } = session;
  const { store, progress } = deps;
  let checkpoint = start;
  const { state } = checkpoint;

  // 1. The groups these weights include.
  if (state.groupIds.length > 0) {
    const { lost, claimed } = await store.reclaimGroups({
      owner: config.owner,
      groupIds: state.groupIds,
      leaseSeconds: config.leaseSeconds,
    });
    if (lost.length > 0) {
      const reason = `its groups were taken meanwhile (${lost.map((loss) => `${loss.groupId} ${loss.why}`).join('; ')})`;
      await discard(
        session,
        checkpoint,
        claimed.map((group) => group.id),
        reason,
      );
      return { kind: 'discarded', reason };
    }
    keeper.hold(state.groupIds);
  }

  // 2. Step records.
  for (const step of state.steps) {
    try {
      await store.recordTrainingStep({
        trainingRunId: state.trainingRunId,
        step: step.step,
        metrics: step.metrics,
        groupIds: step.groupIds,
        ...(step.startedAt ? { startedAt: step.startedAt } : {}),
        ...(step.finishedAt ? { finishedAt: step.finishedAt } : {}),
      });
    } catch (error) {
      if (!isStoreError(error, 'conflict')) throw error;
    }
  }

  // 3. The version.
  if (!checkpoint.publication) {
    const last = state.steps.at(-1);
    const version = await store.registerPolicyVersion({
      policyId: state.policyId,
      ...(state.parentVersionId ? { parentVersionId: state.parentVersionId } : {}),
      trainingRunId: state.trainingRunId,
      metadata: {
        kind: state.kind,
        checkpoint: checkpoint.dir,
        step: state.step,
        groupIds: state.groupIds,
        groupReasons: state.groupReasons,
        ...(last ? { metrics: last.metrics } : {}),
      },
    });
    checkpoint = await writePublication(checkpoint, {
      versionId: version.id,
      version: version.version,
      adapterName: version.adapterName,
    });
    await deps.hook?.('registered');
  }
  const publication = checkpoint.publication as NonNullable<Checkpoint['publication']>;

  // 4. Publication: prepare and verify on every replica (publish-fleet.ts).
  const published = await publishToFleet({
    store,
    versionId: publication.versionId,
    adapterName: publication.adapterName,
    sourceDir: checkpoint.dir,
    servingDir: config.servingDir,
    ...(config.serverAdapterDir ? { serverDir: config.serverAdapterDir } : {}),
    fleet: config.inference,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    onPrepared: () => deps.hook?.('prepared'),
  });
  if (!published.ok || published.acknowledged.length < config.inference.minReplicas) {
    const failure = fleetFailure(published, config.inference.minReplicas, config.inference.replicas.length);
    const reason = `${failure.stage}: ${failure.reason}`;
    await store
      .recordPublishFailure({ versionId: publication.versionId, reason: reason.slice(0, 2000) })
      .catch((error: unknown) =>
        progress.line(`could not record the publication failure: ${errorMessage(error)}`),
      );
    session.pending = checkpoint;
    return {
      kind: 'publish-failed',
      adapterName: publication.adapterName,
      stage: failure.stage,
      reason: failure.reason,
    };
  }
  for (const failed of published.failed) {
    progress.line(
      `${failed.replica} quarantined for ${publication.adapterName} (${failed.stage}: ${failed.reason}); catch-up retries it`,
    );
  }
  await deps.hook?.('published');

  // 5. One transaction.
  if (state.groupIds.length > 0) await keeper.ensure();
  try {
    await store.commitTrainingCycle({
      owner: config.owner,
      versionId: publication.versionId,
      adapterUri: published.adapterPath,
      makeDefault: config.publish.makeDefault,
      replicas: { acknowledged: [...published.acknowledged], fleet: config.inference.replicas },
      trainingRunId: state.trainingRunId,
      groupIds: state.groupIds,
      groupReasons: state.groupReasons,
      trajectoryNotes: state.trajectoryNotes,
    });
  } catch (error) {
    if (isStoreError(error, 'lease-lost') || isStoreError(error, 'policy-lease-lost')) {
      await discard(session, checkpoint, [], `lost its groups before commit: ${error.message}`);
      return { kind: 'discarded', reason: error.message };
    }
    throw error;
  }
  keeper.drop(state.groupIds);

  // 6. Done.
  checkpoint = await writeCommit(checkpoint, {
    versionId: publication.versionId,
    adapterName: publication.adapterName,
    adapterUri: published.adapterPath,
    committedAt: new Date().toISOString(),
  });
  session.pending = undefined;
  session.lineage = { ...session.lineage, parentVersionId: publication.versionId };
  const experimentId = await openAbTest(session, publication, state.parentVersionId);
  await prune(session);
  return {
    kind: 'published',
    adapterName: publication.adapterName,
    versionId: publication.versionId,
    version: publication.version,
    adapterUri: published.adapterPath,
    groupIds: state.groupIds,
    ...(experimentId ? { experimentId } : {}),
    replicas: published.acknowledged,
  };
}

/**
 * Why the fleet publication cannot be committed: the copy failed, or fewer than `minReplicas`
 * replicas verified the version (the first failure names the stage; every one is in its row).
 */
function fleetFailure(
  outcome: FleetPublishOutcome,
  minReplicas: number,
  fleetSize: number,
): { stage: PublishStage; reason: string } {
  if (!outcome.ok) return outcome;
  const [first] = outcome.failed;
  // One endpoint: its own failure, as it always read.
  if (fleetSize === 1 && first) return first;
  const others = outcome.failed.length > 1 ? ` (and ${outcome.failed.length - 1} more replica(s))` : '';
  return {
    stage: first?.stage ?? 'load',
    reason: `${outcome.acknowledged.length} of ${minReplicas} required replica(s) acknowledged it; ${first ? `${first.replica}: ${first.reason}` : 'none failed'}${others}`,
  };
}

async function discard(
  session: TrainerSession,
  checkpoint: Checkpoint,
  release: string[],
  reason: string,
): Promise<void> {
  const where = await discardCheckpoint(checkpoint, reason);
  session.deps.progress.line(`checkpoint ${checkpoint.state.step} discarded (moved to ${where}): ${reason}`);
  if (release.length > 0)
    await session.deps.store.releaseGroups({ owner: session.config.owner, groupIds: release });
  await session.restore();
}

/** An A/B experiment of the new version against its parent, when configured; failures are reported, not fatal. */
async function openAbTest(
  session: TrainerSession,
  publication: NonNullable<Checkpoint['publication']>,
  parentVersionId: string | null,
): Promise<string | undefined> {
  const weight = session.config.publish.abTestWeight;
  if (weight === null) return undefined;
  const { store, progress } = session.deps;
  if (!parentVersionId) {
    progress.line(`no A/B test for ${publication.adapterName}: it has no parent version`);
    return undefined;
  }
  try {
    // The parent first: the control the report compares the candidate with.
    const { experiment } = await store.createExperiment({
      name: abTestName(publication.adapterName),
      description: `opened by the trainer when ${publication.adapterName} was published`,
      arms: [
        { name: 'parent', policyVersionId: parentVersionId, weight: 1 - weight },
        { name: 'candidate', policyVersionId: publication.versionId, weight },
      ],
    });
    progress.line(
      `A/B experiment ${experiment.id}: ${publication.adapterName} gets ${Math.round(weight * 100)}% of traffic`,
    );
    return experiment.id;
  } catch (error) {
    progress.line(`could not open the A/B experiment for ${publication.adapterName}: ${errorMessage(error)}`);
    return undefined;
  }
}

/**
 * Retention: the newest --keep-checkpoints and the --keep-best-checkpoints best by validation
 * (versionsToKeep). The scores are read when this version was just published, so its own validation
 * is not in yet; it is the newest, kept anyway. A failed read keeps every checkpoint this time.
 */
async function prune(session: TrainerSession): Promise<void> {
  const { config, deps } = session;
  let keepVersions = new Set<string>();
  if (config.keepBestCheckpoints > 0) {
    try {
      const scores = await deps.store.versionSplitRewards({
        policyId: session.policy.id,
        split: 'validation',
      });
      const committed = (await listCheckpoints(config.outputDir)).flatMap((checkpoint) =>
        checkpoint.commit ? [checkpoint.commit.versionId] : [],
      );
      keepVersions = versionsToKeep(committed, scores, {
        keepLatest: config.keepCheckpoints,
        keepBest: config.keepBestCheckpoints,
        minEpisodes: 1,
      });
    } catch (error) {
      deps.progress.line(`kept every checkpoint: validation scores unreadable (${errorMessage(error)})`);
      return;
    }
  }
  await pruneCheckpoints(config.outputDir, config.keepCheckpoints, keepVersions);
}
