// Validation: every published version of the demo policy plays the same `validationTasks` tasks of the
// validation split (neither the RL rounds' train tasks nor the A/B's eval tasks: the environment's
// hash of the task id keeps the three apart), one episode each, through the edge with the version
// named. The episodes are ordinary rows in the store; `version_split_rewards` (SQL) aggregates them
// and chooseShipped ranks by it. Every version gets the same task and sampling seeds, so versions are
// compared on common random numbers and the difference between two is less noisy than either score.
import type { Store, VersionSplitReward } from '../../db/store.ts';
import { shippedVersion } from '../../trainer/train/best-version.ts';
import type { DemoConfig } from './demo-config.ts';
import type { PublishedVersion } from './demo-queries.ts';
import type { EdgeClient } from './edge-client.ts';
import type { StopSignal } from './stop-signal.ts';
import { demoEnvironment, demoPolicyName } from './trainer-config.ts';

/** Validation task seeds start here, apart from the demonstrations', RL's and eval's. */
const validationSeedBase = 4_000_000;

/** The task seed of validation task `index` (the same for every version). */
export function validationTaskSeed(seed: number, index: number): number {
  return validationSeedBase + seed * 100_003 + index;
}

export async function validationScores(store: Store): Promise<VersionSplitReward[]> {
  const policy = await store.getPolicy({ policyName: demoPolicyName });
  return store.versionSplitRewards({ policyId: policy.id, split: 'validation', env: demoEnvironment });
}

/**
 * Runs the validation episodes each of `versions` still lacks (all of them for a new version; the rest
 * for one an interrupted run validated in part), all versions at once, and waits for them. Returns the
 * scores of every version afterwards. `onProgress` gets episodes ended so far and the total.
 */
export async function validateVersions(
  config: DemoConfig,
  versions: readonly PublishedVersion[],
  deps: {
    store: Store;
    client: EdgeClient;
    stop: StopSignal;
    onProgress?: (ended: number, total: number) => void;
  },
): Promise<VersionSplitReward[]> {
  if (config.validationTasks === 0) return [];
  const before = new Map((await validationScores(deps.store)).map((row) => [row.policyVersionId, row]));
  const groupIds: string[] = [];
  for (const version of versions) {
    const done = before.get(version.id)?.episodes ?? 0;
    for (let index = done; index < config.validationTasks; index++) {
      deps.stop.check();
      const taskSeed = validationTaskSeed(config.seed, index);
      const started = await deps.client.startGroup({
        env: demoEnvironment,
        groupSize: 1,
        split: 'validation',
        taskSeed,
        policy: version.adapterName,
        settings: {
          temperature: config.temperature,
          maxTokens: config.maxTokensPerTurn,
          seed: taskSeed % 2 ** 20,
        },
      });
      groupIds.push(started.groupId);
    }
  }
  if (groupIds.length > 0)
    await deps.client.waitForGroups(groupIds, (ended) => deps.onProgress?.(ended, groupIds.length));
  return validationScores(deps.store);
}

export interface ShippedChoice {
  /** The version the A/B compares with the start: the last RL version, or an earlier one validation says is better. */
  readonly version: PublishedVersion;
  readonly rule: 'best-validation' | 'last';
  /** With rule `last`: why (validation off, no RL version, none fully validated, none better by the margin). */
  readonly why?: string;
  /** The newest published version, which the loop ended with. */
  readonly last: PublishedVersion;
}

/**
 * The version that ships: among the RL versions (every published one after the warm start's, which
 * is the A/B's other arm), the last, unless an earlier one's mean validation reward beats it by more
 * than 1.645 standard errors (trainer/train/best-version.ts shippedVersion; only fully validated
 * versions compete); the best when the last was not fully validated. The last version when validation
 * is off; the start itself when RL published nothing.
 */
export function chooseShipped(
  config: DemoConfig,
  versions: readonly PublishedVersion[],
  scores: readonly VersionSplitReward[],
): ShippedChoice {
  const [start, ...rl] = versions;
  if (!start) throw new Error('no published demo version to ship');
  const last = versions.at(-1) as PublishedVersion;
  if (config.validationTasks === 0) return { version: last, rule: 'last', last, why: 'validation is off' };
  if (rl.length === 0) return { version: last, rule: 'last', last, why: 'RL published no version' };
  const candidates = new Set(rl.map((version) => version.id));
  const chosen = shippedVersion(
    scores.filter((score) => candidates.has(score.policyVersionId)),
    { minEpisodes: config.validationTasks, newest: last.version },
  );
  const version = chosen ? rl.find((candidate) => candidate.id === chosen.score.policyVersionId) : undefined;
  if (!chosen || !version) return { version: last, rule: 'last', last, why: 'no RL version fully validated' };
  if (chosen.beatLast) return { version, rule: 'best-validation', last };
  return version.id === last.id
    ? { version, rule: 'last', last, why: 'no earlier version beat it by the margin' }
    : { version, rule: 'best-validation', last };
}

/** `shipping demo@9 (validation 87.5%, better than the last, demo@17: 71.9%, by more than the margin)`. */
export function describeChoice(choice: ShippedChoice, scores: readonly VersionSplitReward[]): string {
  const of = (version: PublishedVersion) => {
    const mean = scores.find((score) => score.policyVersionId === version.id)?.meanReward;
    return mean === null || mean === undefined ? 'not validated' : `validation ${(100 * mean).toFixed(1)}%`;
  };
  if (choice.rule === 'last')
    return `shipping ${choice.last.adapterName}, the last version (${of(choice.last)}; ${choice.why ?? 'no choice'})`;
  return `shipping ${choice.version.adapterName} (${of(choice.version)}; the last, ${choice.last.adapterName}: ${of(choice.last)})`;
}
