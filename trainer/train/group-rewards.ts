// The rewards of one claimed group under the configured reward mode, or why the group cannot be
// trained on: RULER (the LLM judge ranks the group; already-`scored` groups reuse their stored final
// rewards), the environment's verifier reward, or both mixed (combine-rewards.ts). Only usable
// trajectories count (ruler/usable-trajectory.ts, the rule RULER's loadJudgeGroup applies too: no
// infrastructure `error`, some turns). Writes go through RULER's store sink and setFinalRewards, so
// the store shows the reward each trajectory was trained with.
import type { GroupWithTrajectories, Store } from '../../db/store.ts';
import type { ScoreRetryPolicy } from '../../protocol/score-retry.ts';
import { assertNever } from '../../protocol/statuses.ts';
import type { JudgeClient } from '../ruler/judge-client.ts';
import type { RulerCache } from '../ruler/ruler-cache.ts';
import type { RulerConfig } from '../ruler/ruler-config.ts';
import { scoreAndRecordGroup } from '../ruler/score-and-record.ts';
import { storeJudgeScoreSink } from '../ruler/store-sink.ts';
import { storedGroupTools } from '../ruler/stored-group-tools.ts';
import { isUsableTrajectory } from '../ruler/usable-trajectory.ts';
import type { StoredMessage } from './build-batch.ts';
import { storedMessages } from './stored-messages.ts';
import type { RewardMode } from './train-config.ts';

export type TrajectoryRow = GroupWithTrajectories['trajectories'][number];
/** A usable trajectory with its turns converted once: the judge reads the messages, training renders them. */
export type ScoredTrajectory = TrajectoryRow & { readonly messages: readonly StoredMessage[] };

/** What a claimed group becomes: rewards to train on, or how the group is left. */
export type GroupRewards =
  | { readonly kind: 'rewards'; readonly trajectories: ScoredTrajectory[]; readonly rewards: number[] }
  /** Nothing in it can ever be trained: the group is marked `failed` with the reason. */
  | { readonly kind: 'failed'; readonly reason: string }
  /** The judge gave up after its retries: RULER already marked the group `unscored` (or, after its
   *  last attempt, `failed`). */
  | { readonly kind: 'unscored'; readonly reason: string }
  /** Not trainable in this mode (e.g. no verifier reward): handed back at the end of the cycle. */
  | { readonly kind: 'skip'; readonly reason: string };

export interface JudgeDeps {
  readonly config: RulerConfig;
  readonly client: JudgeClient;
  readonly cache?: RulerCache;
}

export interface GroupRewardsDeps {
  readonly store: Store;
  readonly mode: RewardMode;
  /** Judge weight and verifier weight for 'ruler+verifier'. */
  readonly weights: { readonly judge: number; readonly verifier: number };
  readonly judge?: JudgeDeps;
  /** How often and when a group the judge failed is judged again (the train config's scoreRetry). */
  readonly scoreRetry?: ScoreRetryPolicy;
}

export async function groupRewards(
  loaded: GroupWithTrajectories,
  deps: GroupRewardsDeps,
): Promise<GroupRewards> {
  const usable = loaded.trajectories
    .filter(isUsableTrajectory)
    .map((trajectory): ScoredTrajectory => ({ ...trajectory, messages: storedMessages(trajectory) }));
  if (usable.length === 0) {
    return {
      kind: 'failed',
      reason: 'no finished trajectory to train on (every episode ended in error or has no turns)',
    };
  }
  switch (deps.mode) {
    case 'verifier':
      return verifierRewards(usable, deps.store);
    case 'ruler':
    case 'ruler+verifier':
      return judgedRewards(loaded, usable, deps);
    default:
      return assertNever(deps.mode, 'reward mode');
  }
}

async function verifierRewards(usable: ScoredTrajectory[], store: Store): Promise<GroupRewards> {
  const missing = usable.filter((trajectory) => trajectory.verifierReward === null);
  if (missing.length > 0) {
    return {
      kind: 'skip',
      reason: `${missing.length} trajectory(ies) have no verifier reward (e.g. ${missing[0]?.id}); the environment has no verifier: use --reward ruler`,
    };
  }
  const rewards = usable.map((trajectory) => trajectory.verifierReward as number);
  await store.setFinalRewards({
    rewards: usable.map((trajectory, index) => ({
      trajectoryId: trajectory.id,
      finalReward: rewards[index] as number,
    })),
  });
  return { kind: 'rewards', trajectories: usable, rewards };
}

async function judgedRewards(
  loaded: GroupWithTrajectories,
  usable: ScoredTrajectory[],
  deps: GroupRewardsDeps,
): Promise<GroupRewards> {
  // A group judged before (e.g. by `edgerl score`) keeps its scores: judging again would cost a call.
  if (loaded.group.status === 'scored' && usable.every((trajectory) => trajectory.finalReward !== null)) {
    return {
      kind: 'rewards',
      trajectories: usable,
      rewards: usable.map((trajectory) => trajectory.finalReward as number),
    };
  }
  if (!deps.judge) {
    throw new Error(
      `--reward ${deps.mode} needs a judge: set EDGERL_JUDGE_BASE_URL and EDGERL_JUDGE_MODEL (see edgerl score --help)`,
    );
  }
  const weights = deps.mode === 'ruler' ? { judge: 1, verifier: 0 } : deps.weights;
  const verifierRewards: Record<string, number> = {};
  for (const trajectory of usable) {
    if (trajectory.verifierReward !== null) verifierRewards[trajectory.id] = trajectory.verifierReward;
  }
  // The judge sees the tools stored with the trajectories, as `edgerl score` does (load-judge-group.ts).
  const { tools } = storedGroupTools(usable);
  const outcome = await scoreAndRecordGroup(
    {
      groupId: loaded.group.id,
      trajectories: usable.map((trajectory) => ({
        id: trajectory.id,
        messages: [...trajectory.messages],
      })),
      verifierRewards,
      ...(tools ? { tools } : {}),
    },
    {
      config: { ...deps.judge.config, rewardWeights: weights },
      client: deps.judge.client,
      ...(deps.judge.cache ? { cache: deps.judge.cache } : {}),
      sink: storeJudgeScoreSink(deps.store, deps.scoreRetry),
    },
  );
  if (outcome.status === 'unscored') return { kind: 'unscored', reason: outcome.reason };
  const byId = new Map(outcome.records.map((record) => [record.trajectoryId, record.reward]));
  const scored = usable.filter((trajectory) => byId.has(trajectory.id));
  return {
    kind: 'rewards',
    trajectories: scored,
    rewards: scored.map((trajectory) => byId.get(trajectory.id) as number),
  };
}
