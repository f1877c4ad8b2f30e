// Phase 2: supervised warm start on scripted-solver demonstrations of multi-hop training tasks, so the
// random model learns the tool-call format before RL; published as the policy's first version (the
// A/B's "start" arm). Skipped when the store already holds a published demo version (a reused run).
import { writeFile } from 'node:fs/promises';
import type { Store } from '../../db/store.ts';
import { getEnvironment } from '../../edge/environments/environments.ts';
import { type MultiHopTask, sampleMultiHopTask, solve } from '../../edge/environments/multi-hop.ts';
import { seededRandom } from '../../edge/environments/seeded-random.ts';
import { runSft } from '../../trainer/train/sft.ts';
import { TrainerSession } from '../../trainer/train/trainer-session.ts';
import type { DemoConfig, DemoPaths } from './demo-config.ts';
import type { DemoProgress } from './demo-progress.ts';
import { type PublishedVersion, publishedVersions } from './demo-queries.ts';
import { demoEnvironment, demoPolicyName, demoTrainConfig } from './trainer-config.ts';

export interface WarmStartResult {
  readonly version: PublishedVersion;
  readonly reused: boolean;
  readonly steps: number;
}

/** Demonstration tasks use seeds from here up, apart from the RL rounds' and eval's. */
const demonstrationSeedBase = 1_000_000;

/**
 * JSONL lines of `{messages, tools}` for `count` training tasks, from the environment's scripted
 * solver, which gives up at once (answers `?`) on `giveUpRate` of them (seeded with the tasks).
 */
export function demonstrationLines(count: number, seed: number, giveUpRate: number): string[] {
  const tools = getEnvironment(demoEnvironment).tools.map((tool) => tool.spec);
  const random = seededRandom(demonstrationSeedBase + seed);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const task: MultiHopTask = sampleMultiHopTask('train', demonstrationSeedBase + seed * 10_007 + i);
    lines.push(JSON.stringify({ messages: solve(task, { rate: giveUpRate, random }), tools }));
  }
  return lines;
}

export async function warmStart(
  config: DemoConfig,
  paths: DemoPaths,
  deps: { store: Store; progress: DemoProgress; inferenceUrls: readonly string[] },
): Promise<WarmStartResult> {
  const existing = await publishedVersions(deps.store, demoPolicyName);
  const first = existing[0];
  if (first) {
    deps.progress.line(`reusing the warm-start adapter ${first.adapterName} (pass --fresh to redo it)`);
    return { version: first, reused: true, steps: 0 };
  }
  await writeFile(
    paths.demonstrations,
    `${demonstrationLines(config.sftDemonstrations, config.seed, config.demonstrationGiveUpRate).join('\n')}\n`,
  );
  const session = await TrainerSession.open(
    demoTrainConfig('sft', config, paths, deps.inferenceUrls, false),
    {
      store: deps.store,
      progress: deps.progress,
    },
  );
  const steps = config.sftEpochs * Math.ceil(config.sftDemonstrations / config.sftBatch);
  const bar = deps.progress.bar('warm start', { unit: 'steps', total: steps, countsSteps: true });
  try {
    const report = await runSft(session);
    if (report.kind !== 'published')
      throw new Error(`the warm start did not publish an adapter (${report.kind})`);
    const version = (await publishedVersions(deps.store, demoPolicyName))[0];
    if (!version) throw new Error('the warm start published no version');
    return { version, reused: false, steps: report.steps };
  } finally {
    bar.end();
    await session.close();
  }
}
