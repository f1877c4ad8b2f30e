// Phase 3: RL rounds. Each round starts groups of episodes on training tasks through the edge's
// rollout API (the policy's default version, i.e. the newest published adapter), waits for them, then
// runs one trainer cycle (claim → verifier/RULER rewards → GRPO step → checkpoint → publish), whose
// adapter the next round's episodes use. Stops between units of work when asked.
import type { Store } from '../../db/store.ts';
import type { JudgeDeps } from '../../trainer/train/group-rewards.ts';
import type { Progress } from '../../trainer/train/progress.ts';
import { runCycle } from '../../trainer/train/run-cycle.ts';
import { TrainerSession } from '../../trainer/train/trainer-session.ts';
import type { DemoConfig, DemoPaths } from './demo-config.ts';
import { publishedVersions } from './demo-queries.ts';
import type { EdgeClient } from './edge-client.ts';
import type { StopSignal } from './stop-signal.ts';
import { demoEnvironment, demoPolicyName, demoTrainConfig } from './trainer-config.ts';

export interface RoundRecord {
  readonly round: number;
  /** Mean verifier reward of the round's episodes (sampled success on training tasks). */
  readonly rolloutSuccess: number;
  readonly episodes: number;
  /** The version published by the round's cycle, or null (no signal, nothing published). */
  readonly publishedVersion: number | null;
  readonly rolloutSeconds: number;
  readonly trainSeconds: number;
}

/** RL task seeds start here, apart from the demonstrations' and eval's. */
export const rlSeedBase = 2_000_000;

export async function rlRounds(
  config: DemoConfig,
  paths: DemoPaths,
  deps: {
    store: Store;
    progress: Progress;
    client: EdgeClient;
    inferenceUrls: readonly string[];
    judge: JudgeDeps | undefined;
    stop: StopSignal;
  },
): Promise<{ rounds: RoundRecord[]; reusedRounds: number }> {
  const { store, progress, client, stop } = deps;
  // Versions after the warm start's are finished rounds of an earlier run.
  const reusedRounds = Math.max(0, (await publishedVersions(store, demoPolicyName)).length - 1);
  if (reusedRounds >= config.rounds) {
    progress.line(`reusing ${reusedRounds} finished RL round(s) (pass --fresh to redo them)`);
    return { rounds: [], reusedRounds };
  }
  if (reusedRounds > 0) progress.line(`reusing ${reusedRounds} finished RL round(s); continuing`);
  const session = await TrainerSession.open(
    demoTrainConfig('rl', config, paths, deps.inferenceUrls, deps.judge !== undefined),
    { store, progress, ...(deps.judge ? { judge: deps.judge } : {}) },
  );
  const rounds: RoundRecord[] = [];
  try {
    for (let round = reusedRounds + 1; round <= config.rounds; round++) {
      stop.check();
      const rolloutStarted = performance.now();
      const groupIds: string[] = [];
      let model = '';
      for (let g = 0; g < config.groupsPerRound; g++) {
        const taskSeed = rlSeedBase + config.seed * 100_003 + round * config.groupsPerRound + g;
        const started = await client.startGroup({
          env: demoEnvironment,
          groupSize: config.groupSize,
          split: 'train',
          taskSeed,
          policy: demoPolicyName,
          settings: {
            temperature: config.temperature,
            maxTokens: config.maxTokensPerTurn,
            seed: taskSeed % 2 ** 20,
          },
        });
        groupIds.push(started.groupId);
        model = started.model;
      }
      const episodes = config.groupsPerRound * config.groupSize;
      const views = await client.waitForGroups(groupIds, (ended) =>
        progress.microBatch(round, ended, episodes, 0, 0),
      );
      const rewards = views.flatMap((view) => view.trajectories.map((t) => t.verifierReward ?? 0));
      const rolloutSuccess = rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length);
      const rolloutSeconds = (performance.now() - rolloutStarted) / 1000;
      progress.line(
        `round ${round}/${config.rounds}: ${episodes} episodes on ${model}, success ${(100 * rolloutSuccess).toFixed(1)}% (${rolloutSeconds.toFixed(1)} s)`,
      );
      stop.check();
      const trainStarted = performance.now();
      const report = await runCycle(session);
      const trainSeconds = (performance.now() - trainStarted) / 1000;
      if (report.kind === 'publish-failed') throw new Error(`round ${round}: publishing the adapter failed`);
      rounds.push({
        round,
        rolloutSuccess,
        episodes,
        publishedVersion: report.kind === 'published' ? report.version : null,
        rolloutSeconds,
        trainSeconds,
      });
      if (report.kind !== 'published')
        progress.line(
          `round ${round}: nothing published (${report.kind}); the next round reuses the same adapter`,
        );
    }
  } finally {
    await session.close();
  }
  return { rounds, reusedRounds };
}
