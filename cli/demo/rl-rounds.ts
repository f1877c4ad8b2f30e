// Phase 3: RL rounds. Each round starts groups of episodes on training tasks through the edge's
// rollout API (the policy's default version, i.e. the newest published adapter), waits for them, rolls
// out more while too few groups have reward spread (--resample-groups, bounded), then runs one trainer
// cycle (claim → verifier/RULER rewards → GRPO step → checkpoint → publish), whose adapter the next
// round's episodes use, and validates the new version (validate.ts). Stops between units of work when
// asked.
import type { Store, VersionSplitReward } from '../../db/store.ts';
import type { JudgeDeps } from '../../trainer/train/group-rewards.ts';
import { runCycle, Trainer } from '../../trainer/train/trainer.ts';
import type { DemoConfig } from './demo-config.ts';
import type { DemoPaths } from './demo-paths.ts';
import type { DemoProgress, PhaseBar } from './demo-progress.ts';
import { publishedVersions } from './demo-queries.ts';
import type { EdgeClient, GroupView } from './edge-client.ts';
import type { StopSignal } from './stop-signal.ts';
import { demoEnvironment, demoPolicyName, demoTrainConfig } from './trainer-config.ts';
import { validateVersions } from './validate.ts';

export interface RoundRecord {
  readonly round: number;
  /** Mean verifier reward of the round's episodes (sampled success on training tasks). */
  readonly rolloutSuccess: number;
  readonly episodes: number;
  /** Groups rolled out, the extra ones (--resample-groups) included, and how many had reward spread. */
  readonly groups: number;
  readonly signalGroups: number;
  /** The version published by the round's cycle, or null (no signal, nothing published). */
  readonly publishedVersion: number | null;
  /** Mean verifier reward of the published version's validation episodes (null: none ran). */
  readonly validationSuccess: number | null;
  readonly rolloutSeconds: number;
  readonly trainSeconds: number;
  readonly validationSeconds: number;
}

/** RL task seeds start here, apart from the demonstrations', eval's and validation's. */
export const rlSeedBase = 2_000_000;
/** Extra (resampled) groups' task seeds start here: never a seed a regular group of any round uses. */
const resampleSeedBase = 5_000_000;

/**
 * An RL group on training task `taskSeed`, from the policy's default version, sampled with the
 * demo's settings (the sampling seed follows the task, so a rerun samples the same episodes).
 */
export function rlGroupRequest(config: DemoConfig, taskSeed: number) {
  return {
    env: demoEnvironment,
    groupSize: config.groupSize,
    split: 'train',
    taskSeed,
    policy: demoPolicyName,
    settings: {
      temperature: rolloutTemperatureOf(config),
      maxTokens: config.maxTokensPerTurn,
      seed: taskSeed % 2 ** 20,
    },
  } as const;
}

/** What the RL rounds sample at: --rollout-temperature, else the served --temperature. */
export const rolloutTemperatureOf = (config: DemoConfig): number =>
  config.rolloutTemperature ?? config.temperature;

/** The episodes' mean verifier reward (an unrewarded episode counts 0): a round's rollout success. */
export function rolloutSuccessOf(views: readonly GroupView[]): { success: number; episodes: number } {
  const rewards = views.flatMap((view) => view.trajectories.map((t) => t.verifierReward ?? 0));
  return {
    success: rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length),
    episodes: rewards.length,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** Whether a group's verifier rewards differ (ended episodes with a reward): GRPO's signal. */
export function hasRewardSpread(view: GroupView): boolean {
  const rewards = view.trajectories.flatMap((t) => (t.verifierReward === null ? [] : [t.verifierReward]));
  return rewards.length >= 2 && Math.max(...rewards) - Math.min(...rewards) > 1e-9;
}

/** How many extra groups to roll out next: what is missing, within what is left of the bound. */
export function resampleCount(
  signalGroups: number,
  wanted: number,
  extraSoFar: number,
  bound: number,
): number {
  return Math.max(0, Math.min(wanted - signalGroups, bound - extraSoFar));
}

export async function rlRounds(
  config: DemoConfig,
  paths: DemoPaths,
  deps: {
    store: Store;
    progress: DemoProgress;
    client: EdgeClient;
    inferenceUrls: readonly string[];
    judge: JudgeDeps | undefined;
    stop: StopSignal;
  },
): Promise<{ rounds: RoundRecord[]; reusedRounds: number; validation: VersionSplitReward[] }> {
  const { store, progress, client, stop } = deps;
  /** Validates every published version that lacks it; on the bar from `from` to `to` rounds done. */
  const validate = async (bar: PhaseBar | undefined, from: number, to: number) => {
    const versions = await publishedVersions(store, demoPolicyName);
    return validateVersions(config, versions, {
      store,
      client,
      stop,
      onProgress: (ended, total) =>
        bar?.update(from + (to - from) * (ended / total), config.rounds, `validation ${ended}/${total}`),
    });
  };
  // Versions after the warm start's are finished rounds of an earlier run.
  const reusedRounds = Math.max(0, (await publishedVersions(store, demoPolicyName)).length - 1);
  if (reusedRounds >= config.rounds) {
    progress.line(`reusing ${reusedRounds} finished RL round(s) (pass --fresh to redo them)`);
    return { rounds: [], reusedRounds, validation: await validate(undefined, 0, 0) };
  }
  if (reusedRounds > 0) progress.line(`reusing ${reusedRounds} finished RL round(s); continuing`);
  const bar = progress.bar('RL', { unit: 'rounds', total: config.rounds });
  // The start (and any reused version) is validated first, for the comparison with every round's.
  let validation = await validate(bar, reusedRounds, reusedRounds);
  const trainer = await Trainer.open(
    demoTrainConfig('rl', config, paths, deps.inferenceUrls, deps.judge !== undefined),
    { store, progress, ...(deps.judge ? { judge: deps.judge } : {}) },
  );
  const rounds: RoundRecord[] = [];
  try {
    for (let round = reusedRounds + 1; round <= config.rounds; round++) {
      stop.check();
      const done = round - 1;
      const rolloutStarted = performance.now();
      const starts: { taskSeed: number }[] = [];
      for (let g = 0; g < config.groupsPerRound; g++)
        starts.push({ taskSeed: rlSeedBase + config.seed * 100_003 + round * config.groupsPerRound + g });
      let { views, model } = await rollOut(config, client, starts, (ended, total) =>
        bar.update(done + 0.5 * (ended / total), config.rounds, `round ${round}: rollouts ${ended}/${total}`),
      );
      let extra = 0;
      for (;;) {
        const missing = resampleCount(
          views.filter(hasRewardSpread).length,
          config.groupsPerRound,
          extra,
          config.resampleGroups,
        );
        if (missing === 0) break;
        stop.check();
        const more = Array.from({ length: missing }, (_, k) => ({
          taskSeed: resampleSeedBase + config.seed * 100_003 + round * 1024 + extra + k,
        }));
        extra += missing;
        const next = await rollOut(config, client, more, (ended, total) =>
          bar.update(done + 0.5, config.rounds, `round ${round}: resampled ${ended}/${total}`),
        );
        views = [...views, ...next.views];
        model = next.model || model;
      }
      const { success: rolloutSuccess, episodes } = rolloutSuccessOf(views);
      const signalGroups = views.filter(hasRewardSpread).length;
      const rolloutSeconds = (performance.now() - rolloutStarted) / 1000;
      stop.check();
      bar.update(done + 0.5, config.rounds, `round ${round}: training`);
      const trainStarted = performance.now();
      const report = await runCycle(trainer);
      const trainSeconds = (performance.now() - trainStarted) / 1000;
      if (report.kind === 'publish-failed') throw new Error(`round ${round}: publishing the adapter failed`);
      const publishedVersion = report.kind === 'published' ? report.version : null;
      const validationStarted = performance.now();
      if (publishedVersion !== null) validation = await validate(bar, done + 0.8, round);
      const validationSeconds = (performance.now() - validationStarted) / 1000;
      const validated = validation.find((row) => row.version === publishedVersion)?.meanReward ?? null;
      rounds.push({
        round,
        rolloutSuccess,
        episodes,
        groups: views.length,
        signalGroups,
        publishedVersion,
        validationSuccess: validated,
        rolloutSeconds,
        trainSeconds,
        validationSeconds,
      });
      bar.update(round, config.rounds);
      const extraNote = extra > 0 ? ` (${extra} resampled)` : '';
      progress.line(
        `round ${round}/${config.rounds}: ${episodes} episodes on ${model}, success ${pct(rolloutSuccess)}, ` +
          `${signalGroups}/${views.length} groups with spread${extraNote}` +
          (publishedVersion === null
            ? `; nothing published (${report.kind}), the next round reuses the same adapter`
            : `; published ${demoPolicyName}@${publishedVersion}${validated === null ? '' : `, validation ${pct(validated)}`}`) +
          ` (${(rolloutSeconds + trainSeconds + validationSeconds).toFixed(1)} s)`,
      );
    }
  } finally {
    bar.end();
    await trainer.close();
  }
  return { rounds, reusedRounds, validation };
}

/** Starts one group per task seed on training tasks and waits for all of them. */
export async function rollOut(
  config: DemoConfig,
  client: EdgeClient,
  starts: readonly { taskSeed: number }[],
  onProgress: (ended: number, total: number) => void,
): Promise<{ views: GroupView[]; model: string }> {
  const groupIds: string[] = [];
  let model = '';
  for (const { taskSeed } of starts) {
    const started = await client.startGroup(rlGroupRequest(config, taskSeed));
    groupIds.push(started.groupId);
    model = started.model;
  }
  const total = starts.length * config.groupSize;
  const views = await client.waitForGroups(groupIds, (ended) => onProgress(ended, total));
  return { views, model };
}
