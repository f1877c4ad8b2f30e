// The A/B result of the demo's experiment: per arm, episodes, successes (verifier reward 1) and the
// Wilson interval; start → final difference with a two-proportion z-test, and Welch's t-test on the
// mean reward. Computed with experiments/statistics.ts, the functions `edgerl ab report` is built on
// (that command had not landed when the demo was written). Episodes that ended in an infrastructure
// error are left out, as the trainer does.
import type { Store } from '../../db/store.ts';
import {
  type DifferenceTest,
  type ProportionSummary,
  summarizeProportion,
  twoProportionTest,
  welchTTest,
} from '../../experiments/statistics.ts';

export interface ArmResult {
  readonly arm: string;
  readonly adapterName: string;
  readonly episodes: number;
  readonly errors: number;
  readonly success: ProportionSummary;
}

export interface AbReport {
  readonly experimentId: string;
  readonly arms: readonly ArmResult[];
  /** final − start success rate, two-proportion z-test. */
  readonly successTest: DifferenceTest;
  /** final − start mean reward, Welch's t-test. */
  readonly rewardTest: DifferenceTest;
}

export async function abReport(store: Store, experimentId: string): Promise<AbReport> {
  const result = await store.sql.query(
    `select a.name, v.adapter_name, t.status, t.verifier_reward
     from trajectories t join experiment_arms a on a.id = t.experiment_arm_id
     join policy_versions v on v.id = a.policy_version_id
     where a.experiment_id = $1 and t.status <> 'running'`,
    [experimentId],
  );
  const byArm = new Map<string, { adapterName: string; rewards: number[]; errors: number }>();
  for (const [arm, adapterName, status, reward] of result.rows) {
    const entry = byArm.get(String(arm)) ?? { adapterName: String(adapterName), rewards: [], errors: 0 };
    if (status === 'error') entry.errors += 1;
    else entry.rewards.push(reward === null ? 0 : Number(reward));
    byArm.set(String(arm), entry);
  }
  const start = byArm.get('start');
  const final = byArm.get('final');
  if (!start || !final || start.rewards.length < 2 || final.rewards.length < 2)
    throw new Error(`experiment ${experimentId}: each arm needs at least 2 finished episodes`);
  const successes = (rewards: number[]) => rewards.filter((r) => r >= 1).length;
  const arms = (['start', 'final'] as const).map((arm) => {
    const entry = arm === 'start' ? start : final;
    return {
      arm,
      adapterName: entry.adapterName,
      episodes: entry.rewards.length,
      errors: entry.errors,
      success: summarizeProportion(successes(entry.rewards), entry.rewards.length),
    };
  });
  return {
    experimentId,
    arms,
    successTest: twoProportionTest(
      successes(start.rewards),
      start.rewards.length,
      successes(final.rewards),
      final.rewards.length,
    ),
    rewardTest: welchTTest(start.rewards, final.rewards),
  };
}
