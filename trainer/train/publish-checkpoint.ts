// The transitions that take a written checkpoint to a published policy version, in an order a kill
// can interrupt anywhere (drive-cycle.ts runs them):
//   checkpointed → registered: hold its groups (taken back after a restart; if another trainer took
//     any, the checkpoint is discarded, since publishing it would train those groups twice), record
//     its steps (a step recorded before is skipped), register the version (`training`) and note it
//     beside the checkpoint (publication.json);
//   registered → published: publish the adapter to the fleet (copy once; load, /v1/models and a probe
//     on every replica; each replica's row in `publications` says how far it got);
//   published → committed: in ONE transaction, the replicas that verified it `ready`, version
//     published (+ default), groups trained, drift notes; then committed.json, an optional A/B
//     experiment, and checkpoint retention.
// A failed publication (fewer than --min-replicas verified it) ends in `publish-failed` with the
// reason on the version; the previous version keeps serving and the next cycle tries again before
// training anything new. A replica that failed while enough others verified is quarantined for the
// version and caught up later (catch-up-fleet.ts).
import { isStoreError } from '../../db/errors.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { abTestName } from './ab-test-name.ts';
import { versionsToKeep } from './best-version.ts';
import {
  type Checkpoint,
  discardCheckpoint,
  listCheckpoints,
  pruneCheckpoints,
  writeCommit,
  writePublication,
} from './checkpoint.ts';
import type { CycleState, Publishing, RegisteredCheckpoint, StateOf } from './cycle-state.ts';
import type { CycleContext } from './step-source.ts';
import type { PublishStage } from './publish.ts';
import { type FleetPublishOutcome, publishToFleet } from './publish-fleet.ts';
import { describeRetention, retainAdapters } from './retain-adapters.ts';
import { redactSecrets } from '../../protocol/redact-secrets.ts';
import type { TrainerSession } from './trainer-session.ts';

/** checkpointed → registered (or discarded): its groups held, its steps recorded, its version registered. */
export async function registerCheckpoint(
  state: StateOf<'checkpointed'>,
  context: CycleContext,
): Promise<CycleState> {
  const { session, keeper } = context;
  const { config, deps } = session;
  const { store } = deps;
  const { checkpoint } = state;
  const { state: saved } = checkpoint;

  if (saved.groupIds.length > 0) {
    const { lost, claimed } = await store.reclaimGroups({
      owner: config.owner,
      groupIds: saved.groupIds,
      leaseSeconds: config.leaseSeconds,
    });
    if (lost.length > 0) {
      const reason = `its groups were taken meanwhile (${lost.map((loss) => `${loss.groupId} ${loss.why}`).join('; ')})`;
      return discard(
        state,
        session,
        claimed.map((group) => group.id),
        reason,
      );
    }
    keeper.hold(saved.groupIds);
  }

  for (const step of saved.steps) {
    try {
      await store.recordTrainingStep({
        trainingRunId: saved.trainingRunId,
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

  if (checkpoint.publication) {
    return { ...state, kind: 'registered', checkpoint: checkpoint as RegisteredCheckpoint };
  }
  const last = saved.steps.at(-1);
  const version = await store.registerPolicyVersion({
    policyId: saved.policyId,
    ...(saved.parentVersionId ? { parentVersionId: saved.parentVersionId } : {}),
    trainingRunId: saved.trainingRunId,
    metadata: {
      kind: saved.kind,
      checkpoint: checkpoint.dir,
      // What catch-up verifies replicas against, without an engine (adapter-probe.ts).
      ...(checkpoint.probe ? { probe: checkpoint.probe } : {}),
      step: saved.step,
      groupIds: saved.groupIds,
      groupReasons: saved.groupReasons,
      ...(last ? { metrics: last.metrics } : {}),
    },
  });
  const registered = (await writePublication(checkpoint, {
    versionId: version.id,
    version: version.version,
    adapterName: version.adapterName,
  })) as RegisteredCheckpoint;
  return { ...state, kind: 'registered', checkpoint: registered };
}

/** registered → published (or publish-failed): the adapter prepared and verified on the fleet (publish-fleet.ts). */
export async function publishCheckpoint(
  state: StateOf<'registered'>,
  context: CycleContext,
): Promise<CycleState> {
  const { config, deps, policy, engine } = context.session;
  const { store, progress } = deps;
  const { checkpoint } = state;
  const { publication } = checkpoint;
  const published = await publishToFleet({
    check: {
      probe: checkpoint.probe,
      baseModel: policy.baseModel,
      tolerance: config.inference.probeTolerance,
      vocabSize: engine.model.vocabSize,
    },
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
    const reason = redactSecrets(`${failure.stage}: ${failure.reason}`);
    await store
      .recordPublishFailure({ versionId: publication.versionId, reason: reason.slice(0, 2000) })
      .catch((error: unknown) =>
        progress.line(`could not record the publication failure: ${errorMessage(error)}`),
      );
    return {
      ...state,
      kind: 'publish-failed',
      outcome: {
        kind: 'publish-failed',
        adapterName: publication.adapterName,
        stage: failure.stage,
        reason: redactSecrets(failure.reason),
      },
    };
  }
  for (const failed of published.failed) {
    progress.line(
      redactSecrets(
        `${failed.replica} quarantined for ${publication.adapterName} (${failed.stage}: ${failed.reason}); catch-up retries it`,
      ),
    );
  }
  return {
    ...state,
    kind: 'published',
    fleet: { adapterPath: published.adapterPath, acknowledged: published.acknowledged },
  };
}

/** published → committed (or discarded): one transaction marks it all, then the markers and retention. */
export async function commitCheckpoint(
  state: StateOf<'published'>,
  context: CycleContext,
): Promise<CycleState> {
  const { session, keeper } = context;
  const { config, deps } = session;
  const { checkpoint, fleet } = state;
  const { state: saved, publication } = checkpoint;
  if (saved.groupIds.length > 0) await keeper.ensure();
  try {
    await deps.store.commitTrainingCycle({
      owner: config.owner,
      versionId: publication.versionId,
      adapterUri: fleet.adapterPath,
      makeDefault: config.publish.makeDefault,
      replicas: { acknowledged: [...fleet.acknowledged], fleet: config.inference.replicas },
      trainingRunId: saved.trainingRunId,
      groupIds: saved.groupIds,
      groupReasons: saved.groupReasons,
      trajectoryNotes: saved.trajectoryNotes,
    });
  } catch (error) {
    if (isStoreError(error, 'lease-lost') || isStoreError(error, 'policy-lease-lost')) {
      return discard(state, session, [], `lost its groups before commit: ${error.message}`, error.message);
    }
    throw error;
  }
  keeper.drop(saved.groupIds);
  await writeCommit(checkpoint, {
    versionId: publication.versionId,
    adapterName: publication.adapterName,
    adapterUri: fleet.adapterPath,
    committedAt: new Date().toISOString(),
  });
  const experimentId = await openAbTest(session, publication, saved.parentVersionId);
  await prune(session);
  await retain(session);
  return {
    kind: 'committed',
    lineage: { ...state.lineage, parentVersionId: publication.versionId },
    resumed: state.resumed,
    stale: state.stale,
    steps: saved.steps.length,
    outcome: {
      kind: 'published',
      adapterName: publication.adapterName,
      versionId: publication.versionId,
      version: publication.version,
      adapterUri: fleet.adapterPath,
      groupIds: saved.groupIds,
      ...(experimentId ? { experimentId } : {}),
      replicas: fleet.acknowledged,
    },
  };
}

/**
 * Adapter retention after the commit (retain-adapters.ts): the new version is routable now, so the
 * oldest beyond --keep-versions leaves the replicas. Reported, never fatal: the version is committed.
 */
async function retain(session: TrainerSession): Promise<void> {
  const { config, deps } = session;
  try {
    const report = await retainAdapters({
      store: deps.store,
      fleet: config.inference,
      policyName: config.policyName,
      servingDir: config.servingDir,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
    for (const line of describeRetention(report)) deps.progress.line(line);
  } catch (error) {
    deps.progress.line(redactSecrets(`adapter retention failed: ${errorMessage(error)}`));
  }
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

/** Moves an unpublishable checkpoint aside (kept for inspection) and hands back the groups it held. */
async function discard(
  state: Publishing & { readonly checkpoint: Checkpoint },
  session: TrainerSession,
  release: string[],
  why: string,
  reason = why,
): Promise<CycleState> {
  const { checkpoint } = state;
  const where = await discardCheckpoint(checkpoint, why);
  session.deps.progress.line(`checkpoint ${checkpoint.state.step} discarded (moved to ${where}): ${why}`);
  if (release.length > 0)
    await session.deps.store.releaseGroups({ owner: session.config.owner, groupIds: release });
  return {
    kind: 'discarded',
    lineage: state.lineage,
    resumed: state.resumed,
    stale: state.stale,
    steps: checkpoint.state.steps.length,
    outcome: { kind: 'discarded', reason },
  };
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
