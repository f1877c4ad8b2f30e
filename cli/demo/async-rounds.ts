// Phase 3 with `--async`: the same rollouts and the same number of training steps as the rounds of
// rl-rounds.ts, overlapped. A producer keeps `--groups` groups in flight through the edge's rollout
// API, starting the next task as soon as one group ends (each group sampled by the policy's default
// at its start: the newest version the trainer published); the trainer runs continuously
// (trainer/train/run-continuous.ts) and takes a step whenever `--groups` complete groups wait, with
// the staleness bound and the rollout correction of `edgerl train --continuous`. The tasks are the
// synchronous rounds' tasks, in the same order, so the two modes train on the same prompts. Stops
// between units of work when asked.
import type { Store, VersionSplitReward } from '../../db/store.ts';
import type { JudgeDeps } from '../../trainer/train/group-rewards.ts';
import type { Progress } from '../../trainer/train/progress.ts';
import type { CycleReport } from '../../trainer/train/cycle-state.ts';
import { runContinuous } from '../../trainer/train/run-continuous.ts';
import type { TrainConfig } from '../../trainer/train/train-config.ts';
import { Trainer } from '../../trainer/train/trainer.ts';
import type { DemoConfig } from './demo-config.ts';
import type { DemoPaths } from './demo-paths.ts';
import { publishedVersions } from './demo-queries.ts';
import type { EdgeClient, GroupView } from './edge-client.ts';
import { hasRewardSpread, type RoundRecord, rlGroupRequest, rlSeedBase } from './rl-rounds.ts';
import type { StopSignal } from './stop-signal.ts';
import { validateVersions } from './validate.ts';
import { demoPolicyName, demoTrainConfig } from './trainer-config.ts';

/** How often the producer looks at its groups and the trainer at the store, in ms. */
const pollMs = 250;

export async function asyncRounds(
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
): Promise<{ rounds: RoundRecord[]; reusedRounds: number; validation: VersionSplitReward[] }> {
  const { store, progress, client, stop } = deps;
  // Validation runs once, after the rounds, for every version (the start included): during them it
  // would compete with the rollouts the trainer waits for.
  const validate = async () =>
    validateVersions(config, await publishedVersions(store, demoPolicyName), { store, client, stop });
  const reusedRounds = Math.max(0, (await publishedVersions(store, demoPolicyName)).length - 1);
  if (reusedRounds >= config.rounds) {
    progress.line(`reusing ${reusedRounds} finished RL round(s) (pass --fresh to redo them)`);
    return { rounds: [], reusedRounds, validation: await validate() };
  }
  const base = demoTrainConfig('rl', config, paths, deps.inferenceUrls, deps.judge !== undefined);
  // --continuous, as `edgerl train` resolves it: the rollout correction on.
  const trainConfig: TrainConfig = {
    ...base,
    continuous: true,
    offPolicy: { ...base.offPolicy, correction: 'tis' },
  };
  const trainer = await Trainer.open(trainConfig, {
    store,
    progress,
    ...(deps.judge ? { judge: deps.judge } : {}),
  });

  // The synchronous rounds' tasks, in their order: round r, group g.
  const tasks: number[] = [];
  for (let round = reusedRounds + 1; round <= config.rounds; round++) {
    for (let g = 0; g < config.groupsPerRound; g++)
      tasks.push(rlSeedBase + config.seed * 100_003 + round * config.groupsPerRound + g);
  }
  const ended = new Map<string, GroupView>();
  let producing = true;
  let failure: unknown;

  const produce = async () => {
    const inFlight = new Map<string, number>(); // group id → task seed
    let next = 0;
    try {
      while ((next < tasks.length || inFlight.size > 0) && !stop.stopped && failure === undefined) {
        while (next < tasks.length && inFlight.size < config.groupsPerRound) {
          const taskSeed = tasks[next] as number;
          next += 1;
          const started = await client.startGroup(rlGroupRequest(config, taskSeed));
          inFlight.set(started.groupId, taskSeed);
        }
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        for (const groupId of [...inFlight.keys()]) {
          const view = await client.group(groupId);
          if (view.group.status === 'running') continue;
          inFlight.delete(groupId);
          ended.set(groupId, view);
        }
      }
    } catch (error) {
      failure ??= error;
    } finally {
      producing = false;
    }
  };

  const cycles: { report: CycleReport; waited: number; trained: number }[] = [];
  /** Groups waiting at the first count after the producer ended (undefined before it). */
  let leftAfterProducer: number | undefined;
  let lastEnd = performance.now();
  let cycleStart = lastEnd;
  const train = async () => {
    await runContinuous(trainer, {
      // Done once the producer is and a count since found nothing left (or on a stop or a failure).
      stopping: () =>
        stop.stopped || failure !== undefined || (leftAfterProducer === 0 && !trainer.position.pending),
      pollMs,
      wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      ready: (waiting) => {
        if (!producing) leftAfterProducer = waiting;
        const go = waiting >= config.groupsPerRound || (!producing && waiting > 0);
        if (go) cycleStart = performance.now();
        return go;
      },
      onCycle: (report) => {
        const now = performance.now();
        if (report.kind === 'publish-failed') failure ??= new Error('publishing the adapter failed');
        const cycle = { report, waited: (cycleStart - lastEnd) / 1000, trained: (now - cycleStart) / 1000 };
        lastEnd = now;
        if (report.kind === 'idle') return;
        cycles.push(cycle);
        progress.line(
          `async cycle ${cycles.length}: ${report.kind === 'published' ? `published version ${report.version}` : report.kind} (waited ${cycle.waited.toFixed(1)} s for groups, ${cycle.trained.toFixed(1)} s to train and publish; ${ended.size} of ${tasks.length} groups rolled out)`,
        );
      },
      onError: (error) => {
        failure ??= error;
      },
    });
  };

  try {
    await Promise.all([produce(), train()]);
    if (failure !== undefined) throw failure;
    stop.check();
  } finally {
    await trainer.close();
  }
  // Every group has ended by now, so each cycle's success can be read off the producer's views.
  const rounds = cycles.flatMap((cycle, index) => {
    const record = roundRecord(reusedRounds + index + 1, cycle.report, ended, config.groupSize, cycle);
    return record ? [record] : [];
  });
  const validation = await validate();
  const validated = (version: number | null) =>
    validation.find((row) => row.version === version)?.meanReward ?? null;
  return {
    rounds: rounds.map((round) => ({ ...round, validationSuccess: validated(round.publishedVersion) })),
    reusedRounds,
    validation,
  };
}

/**
 * A cycle that consumed groups as a round: its groups' sampled success, and (overlapped, so not a
 * rollout phase) the seconds the trainer waited for them and spent training. Idle cycles are none.
 */
function roundRecord(
  round: number,
  report: CycleReport,
  ended: ReadonlyMap<string, GroupView>,
  groupSize: number,
  seconds: { waited: number; trained: number },
): RoundRecord | undefined {
  if (report.kind === 'idle' || report.kind === 'discarded') return undefined;
  const groupIds = report.kind === 'publish-failed' ? [] : report.groupIds;
  const rewards = groupIds.flatMap(
    (id) => ended.get(id)?.trajectories.map((trajectory) => trajectory.verifierReward ?? 0) ?? [],
  );
  return {
    round,
    rolloutSuccess: rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length),
    episodes: groupIds.length * groupSize,
    groups: groupIds.length,
    signalGroups: groupIds.filter((id) => {
      const view = ended.get(id);
      return view !== undefined && hasRewardSpread(view);
    }).length,
    publishedVersion: report.kind === 'published' ? report.version : null,
    rolloutSeconds: seconds.waited,
    trainSeconds: seconds.trained,
    validationSuccess: null, // filled in after the rounds
    validationSeconds: 0,
  };
}
