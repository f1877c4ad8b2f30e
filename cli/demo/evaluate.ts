// Phase 4: the A/B evaluation. An experiment with two arms, the starting policy (the warm-start
// adapter, the control) and the final one, each at weight 1, metric success, verdict after every
// eval task ran; every held-out eval task runs once in each arm, through the edge's rollout API with
// the experiment named (a paired design: both arms see the same tasks). The stickiness key of each run
// is chosen so that the edge's routing (experiments/pick-arm.ts) sends it to the intended arm. Leaves
// the statistics to the experiments report (experiments/load-ab-report.ts).
import type { Store } from '../../db/store.ts';
import { pickArm } from '../../experiments/pick-arm.ts';
import type { DemoConfig } from './demo-config.ts';
import type { DemoProgress } from './demo-progress.ts';
import type { PublishedVersion } from './demo-queries.ts';
import type { EdgeClient } from './edge-client.ts';
import type { StopSignal } from './stop-signal.ts';
import { demoEnvironment } from './trainer-config.ts';

export interface EvalRun {
  readonly experimentId: string;
  readonly experimentName: string;
  readonly start: PublishedVersion;
  readonly final: PublishedVersion;
  readonly groupIds: string[];
}

/** Eval task seeds start here, apart from the demonstrations' and RL's (the split keeps tasks apart too). */
const evalSeedBase = 3_000_000;

export async function evaluate(
  config: DemoConfig,
  deps: {
    store: Store;
    progress: DemoProgress;
    client: EdgeClient;
    start: PublishedVersion;
    final: PublishedVersion;
    /** With --eval-last, a third arm for the newest version when it is not the one that ships. */
    last?: PublishedVersion;
    /** Loads the arms on the fleet: the start arm was unloaded by retention while RL published (start-services.ts). */
    catchUp: () => Promise<void>;
    stop: StopSignal;
  },
): Promise<EvalRun> {
  const { store, client, progress } = deps;
  const lastArm =
    config.evalLast && deps.last && deps.last.id !== deps.final.id && deps.last.id !== deps.start.id
      ? deps.last
      : undefined;
  const armNames = lastArm ? (['start', 'final', 'last'] as const) : (['start', 'final'] as const);
  const experimentName = `demo-eval-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const { experiment } = await store.createExperiment({
    name: experimentName,
    description: `demo: ${deps.start.adapterName} (start) vs ${deps.final.adapterName} (final: the version that ships) on held-out multi-hop tasks`,
    metric: 'success',
    minSamples: config.evalPerArm,
    arms: [
      { name: 'start', policyVersionId: deps.start.id, weight: 1 },
      { name: 'final', policyVersionId: deps.final.id, weight: 1 },
      ...(lastArm ? [{ name: 'last', policyVersionId: lastArm.id, weight: 1 }] : []),
    ],
  });
  // The arms as the edge's router reads them, in its order.
  const { arms } = await store.getExperiment({ experimentId: experiment.id });
  // A running experiment's arms are routable, so catch-up loads the ones retention unloaded.
  await deps.catchUp();
  progress.line(
    `experiment ${experimentName}: ${deps.start.adapterName} vs ${deps.final.adapterName}${lastArm ? ` and the last, ${lastArm.adapterName}` : ''}, ${config.evalPerArm} eval tasks per arm`,
  );
  const groupIds: string[] = [];
  for (let i = 0; i < config.evalPerArm; i++) {
    deps.stop.check();
    const taskSeed = evalSeedBase + config.seed * 100_003 + i;
    for (const [armIndex, armName] of armNames.entries()) {
      const stickinessKey = await keyForArm(experiment.id, `eval-${i}-${armName}`, arms, armName);
      const started = await client.startGroup({
        env: demoEnvironment,
        groupSize: 1,
        split: 'eval',
        taskSeed,
        experiment: experiment.id,
        stickinessKey,
        settings: {
          temperature: config.temperature,
          maxTokens: config.maxTokensPerTurn,
          seed: (taskSeed + armIndex) % 2 ** 20,
        },
      });
      if (started.arm !== armName)
        throw new Error(`the edge routed ${stickinessKey} to arm ${started.arm}, expected ${armName}`);
      groupIds.push(started.groupId);
    }
  }
  const total = groupIds.length;
  const bar = progress.bar('A/B evaluation', { unit: 'episodes', total });
  try {
    await client.waitForGroups(groupIds, (ended) => bar.update(ended, total));
  } finally {
    bar.end();
  }
  return { experimentId: experiment.id, experimentName, start: deps.start, final: deps.final, groupIds };
}

/** The first `${prefix}-k` that the experiment's hash routing sends to the arm named `target`. */
async function keyForArm(
  experimentId: string,
  prefix: string,
  arms: readonly { readonly name: string; readonly weight: number }[],
  target: string,
): Promise<string> {
  for (let k = 0; k < 1000; k++) {
    const key = `${prefix}-${k}`;
    if ((await pickArm(experimentId, arms, key))?.name === target) return key;
  }
  throw new Error(`no stickiness key for arm ${target} in 1000 tries (a zero-weight arm?)`);
}
