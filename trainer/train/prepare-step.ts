// Gathers one optimiser step's data: claims groups under a lease until `groupsPerStep` of them have
// rewards (or none is left), skips those sampled too many versions behind the head (staleness.ts;
// marked at once, never scored), scores the rest (group-rewards.ts), computes group-relative
// advantages, and builds the token sequences of the groups that carry signal. Groups that cannot be
// trained in this mode are set aside (handed back at the end of the cycle); groups whose episodes all
// failed are marked `failed`. Leaves out the gradient step and everything after it.
import { type GroupAdvantages, batchAdvantages } from '../grpo/advantages.ts';
import type { GroupRecord } from '../grpo/step-metrics.ts';
import { buildBatch, type BuiltBatch, type TrajectoryInput } from './build-batch.ts';
import { groupRewards, type ScoredTrajectory } from './group-rewards.ts';
import type { Lineage } from './cycle-state.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import { storedTools, toolsMissingLine } from './stored-tools.ts';
import type { TrainerSession } from './trainer-session.ts';

/**
 * The task splits the trainer learns from. Held-out episodes (validation, eval) choose and judge
 * versions; training on them would leak the very tasks that measure the policy.
 */
export const trainedSplits = ['train'] as const;

export interface PreparedStep {
  /** Every group with rewards: trained on, or consumed without signal. */
  readonly consumed: string[];
  /** Groups whose sequences are in the batch. */
  readonly used: string[];
  /** Consumed groups that gave no gradient, with why. */
  readonly reasons: Record<string, string>;
  readonly groups: GroupRecord[];
  readonly batch: BuiltBatch;
  /** Claimed but not trainable in this mode: release at the end of the cycle. */
  readonly setAside: string[];
  /** Claimed, found beyond --max-off-policy-steps and marked so (consumed without training). */
  readonly stale: string[];
  /** Versions behind the head of each trajectory of the scored groups. */
  readonly staleness: Readonly<Record<string, number>>;
  /** The lineage, with the training run that stale groups were recorded under. */
  readonly lineage: Lineage;
}

export async function prepareStep(
  session: TrainerSession,
  keeper: LeaseKeeper,
  start: Lineage,
  /** Groups the judge failed earlier in this cycle: judged again in a later cycle, not this one. */
  unscored: Set<string> = new Set(),
): Promise<PreparedStep | undefined> {
  const { config, deps } = session;
  const { store, progress } = deps;
  const scored: { groupId: string; trajectories: ScoredTrajectory[]; rewards: number[] }[] = [];
  const setAside: string[] = [];
  const stale: string[] = [];
  const staleness: Record<string, number> = {};
  let lineage = start;
  for (;;) {
    const wanted = config.groupsPerStep - scored.length;
    if (wanted <= 0) break;
    const claimed = await store.claimGroups({
      owner: config.owner,
      limit: wanted,
      leaseSeconds: config.leaseSeconds,
      policyId: session.policy.id,
      // Judged modes take unscored groups back once their wait is over (protocol/score-retry.ts).
      retryUnscored: config.reward !== 'verifier',
      excludeIds: [...unscored],
      splits: [...trainedSplits],
    });
    if (claimed.length === 0) break;
    keeper.hold(claimed.map((group) => group.id));
    const staleNow: Record<string, string> = {};
    for (const group of claimed) {
      const loaded = await store.getGroup({ groupId: group.id, includeTurns: true });
      const verdict = await session.versions.judge(
        lineage.parentVersionId,
        loaded.trajectories.map((trajectory) => trajectory.policyVersionId ?? loaded.group.policyVersionId),
        config.offPolicy.maxOffPolicySteps,
      );
      if (verdict.kind === 'stale') {
        staleNow[group.id] = verdict.reason;
        continue;
      }
      loaded.trajectories.forEach((trajectory, index) => {
        staleness[trajectory.id] = verdict.perTrajectory[index] as number;
      });
      const outcome = await groupRewards(loaded, {
        store,
        mode: config.reward,
        weights: config.rewardWeights,
        ...(deps.judge ? { judge: deps.judge } : {}),
        scoreRetry: config.scoreRetry,
      });
      switch (outcome.kind) {
        case 'rewards':
          scored.push({ groupId: group.id, trajectories: outcome.trajectories, rewards: outcome.rewards });
          break;
        case 'failed':
          await store.markGroupFailed({ groupId: group.id, reason: outcome.reason });
          keeper.drop([group.id]);
          progress.line(`group ${group.id} failed: ${outcome.reason}`);
          break;
        case 'unscored':
          unscored.add(group.id);
          await store.releaseGroups({ owner: config.owner, groupIds: [group.id] });
          keeper.drop([group.id]);
          progress.line(await unscoredLine(store, group.id, outcome.reason));
          break;
        case 'skip':
          setAside.push(group.id);
          progress.line(`group ${group.id} set aside: ${outcome.reason}`);
          break;
      }
    }
    const marked = await markStale(session, keeper, lineage, staleNow);
    lineage = marked.lineage;
    stale.push(...marked.groupIds);
  }
  if (scored.length === 0) {
    return setAside.length > 0 || stale.length > 0
      ? {
          consumed: [],
          used: [],
          reasons: {},
          groups: [],
          batch: emptyBatch(),
          setAside,
          stale,
          staleness,
          lineage,
        }
      : undefined;
  }

  const advantages = batchAdvantages(
    scored.map((group) => ({ id: group.groupId, rewards: group.rewards })),
    { scale: config.loss.scaleRewards, eps: config.loss.advantageEps },
  );
  const reasons: Record<string, string> = {};
  for (const groupId of advantages.noSignal) reasons[groupId] = 'no-signal';
  const inputs: TrajectoryInput[] = [];
  scored.forEach((group, index) => {
    const result = advantages.groups[index] as GroupAdvantages;
    if (result.noSignal) return;
    group.trajectories.forEach((trajectory, slot) => {
      inputs.push({
        trajectoryId: trajectory.id,
        groupId: group.groupId,
        messages: trajectory.messages,
        ...storedTools(trajectory),
        advantage: result.advantages[slot] as number,
      });
    });
  });
  const toolsMissing = inputs.filter((input) => input.tools === undefined).length;
  if (toolsMissing > 0) progress.line(toolsMissingLine(toolsMissing));
  const batch = buildBatch(session.tokenizer, inputs, {
    vocabSize: session.engine.model.vocabSize,
    maxTokens: session.maxTokens,
  });
  for (const skip of batch.skipped)
    progress.line(`trajectory ${skip.trajectoryId} left out (${skip.reason}): ${skip.detail}`);
  const withSequences = new Set(batch.sequences.map((sequence) => sequence.groupId));
  const used = advantages.used.filter((groupId) => withSequences.has(groupId));
  for (const groupId of advantages.used) {
    if (!withSequences.has(groupId)) reasons[groupId] = 'no-trainable-sequences';
  }
  return {
    consumed: scored.map((group) => group.groupId),
    used,
    reasons,
    groups: advantages.groups.map((group) => ({
      rewards: group.rewards,
      advantages: group.advantages,
      std: group.std,
      noSignal: group.noSignal,
    })),
    batch,
    setAside,
    stale,
    staleness,
    lineage,
  };
}

/**
 * Consumes groups too stale to train on, at once and in one transaction: each becomes `trained` by
 * the run with its reason (`stale: sampled by agent@2, 5 version(s) behind agent@7 …`) and no
 * version, like a group without signal. Nothing waits on a checkpoint: no weights include them.
 */
async function markStale(
  session: TrainerSession,
  keeper: LeaseKeeper,
  start: Lineage,
  reasons: Record<string, string>,
): Promise<{ readonly groupIds: string[]; readonly lineage: Lineage }> {
  const groupIds = Object.keys(reasons);
  if (groupIds.length === 0) return { groupIds, lineage: start };
  const { store, progress } = session.deps;
  const lineage = await session.ensureTrainingRun(start);
  // The commit checks that this trainer still holds every one of them (`lease-lost` otherwise).
  await store.commitTrainingCycle({
    owner: session.config.owner,
    trainingRunId: lineage.trainingRunId,
    groupIds,
    groupReasons: reasons,
  });
  keeper.drop(groupIds);
  for (const groupId of groupIds) progress.line(`group ${groupId} skipped: ${reasons[groupId]}`);
  return { groupIds, lineage };
}

function emptyBatch(): BuiltBatch {
  return { sequences: [], reports: [], skipped: [] };
}

/** Per-trajectory notes for the store: what the training render measured, and how stale it was. */
export function trajectoryNotes(
  batch: BuiltBatch,
  staleness: Readonly<Record<string, number>> = {},
): Record<string, Record<string, unknown>> {
  const notes: Record<string, Record<string, unknown>> = {};
  for (const report of batch.reports) {
    const { trajectoryId, ...measured } = report;
    const behind = staleness[trajectoryId];
    notes[trajectoryId] = {
      training: { ...measured, ...(behind === undefined ? {} : { staleness: behind }) },
    };
  }
  for (const skip of batch.skipped) {
    notes[skip.trajectoryId] = { training: { skipped: skip.reason, detail: skip.detail.slice(0, 500) } };
  }
  return notes;
}

/** What became of a group the judge failed: when it is judged again, or that it was given up. */
async function unscoredLine(
  store: TrainerSession['deps']['store'],
  groupId: string,
  reason: string,
): Promise<string> {
  const { group } = await store.getGroup({ groupId });
  if (group.status === 'failed') return `group ${groupId} failed: ${group.statusReason ?? reason}`;
  const next = group.nextScoreAt
    ? ` (attempt ${group.scoreAttempts}; judged again after ${group.nextScoreAt.toISOString()})`
    : '';
  return `group ${groupId} left unscored${next}: ${reason}`;
}
