// Phase 2: supervised warm start on scripted-solver demonstrations of multi-hop training tasks, so the
// random model learns the tool-call format before RL; published as the policy's first version (the
// A/B's "start" arm). Skipped when the store already holds a published demo version (a reused run).
import { writeFile } from 'node:fs/promises';
import type { Store } from '../../db/store.ts';
import { getEnvironment } from '../../edge/environments/environments.ts';
import {
  giveUpAnswer,
  type MultiHopTask,
  sampleMultiHopTask,
  solve,
} from '../../edge/environments/multi-hop.ts';
import { seededRandom } from '../../edge/environments/seeded-random.ts';
import { buildBatch } from '../../trainer/train/build-batch.ts';
import type { TrainingSequence } from '../../trainer/engine/training-sequence.ts';
import { readDemonstrations } from '../../trainer/train/sft-steps.ts';
import { runSft, Trainer } from '../../trainer/train/trainer.ts';
import type { TrainerSession } from '../../trainer/train/trainer-session.ts';
import {
  type CopyAccuracy,
  copyAccuracy,
  copyReached,
  copyWeighted,
  describeCopyAccuracy,
} from './copy-probe.ts';
import type { DemoConfig } from './demo-config.ts';
import type { DemoPaths } from './demo-paths.ts';
import type { DemoProgress } from './demo-progress.ts';
import type { StopSignal } from './stop-signal.ts';
import { type PublishedVersion, publishedVersions } from './demo-queries.ts';
import { demoEnvironment, demoPolicyName, demoTrainConfig } from './trainer-config.ts';

export interface WarmStartResult {
  readonly version: PublishedVersion;
  readonly reused: boolean;
  readonly steps: number;
  /** The copy probe's last reading (undefined when reused or with --sft-probe 0). */
  readonly copy?: CopyAccuracy;
  /** Whether it stopped on the probe's evidence before the step cap. */
  readonly copyReached?: boolean;
}

/** Steps between two readings of the copy probe: ~3% of the warm start's time at 48 demonstrations. */
export const copyProbeEvery = 25;

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

/** Held-out demonstrations for the copy probe (copy-probe.ts) use seeds from here up. */
const probeSeedBase = 2_000_000;

/**
 * JSONL lines of `count` solved demonstrations (no give-ups) of validation-split tasks, for the copy
 * probe: tasks the warm start never trains on, apart from the RL rounds' (train) and the A/B's (eval).
 * Stratified by answer digit (each digit count/10 times, the first count mod 10 digits once more),
 * so the stop rule reads every digit's copy from several answers: drawn in seed order, 48 of them held
 * the digit 1 three times on seed 1 and it passed while the digit was copied 7 times in 18.
 */
export function probeDemonstrationLines(count: number, seed: number): string[] {
  const tools = getEnvironment(demoEnvironment).tools.map((tool) => tool.spec);
  const quota = (digit: number) => Math.floor(count / 10) + (digit < count % 10 ? 1 : 0);
  const taken = new Array<number>(10).fill(0);
  const lines: string[] = [];
  for (let i = 0; lines.length < count; i++) {
    const task = sampleMultiHopTask('validation', probeSeedBase + seed * 10_007 + i);
    const digit = Number(task.answer);
    if ((taken[digit] as number) >= quota(digit)) continue;
    taken[digit] = (taken[digit] as number) + 1;
    lines.push(JSON.stringify({ messages: solve(task), tools }));
  }
  return lines;
}

const decodeOf = (session: TrainerSession) => (id: number) => session.tokenizer.decodeToken(id);

/** The copy probe's held-out demonstrations, rendered as the trainer renders its own. */
async function probeSequences(
  config: DemoConfig,
  paths: DemoPaths,
  session: TrainerSession,
): Promise<TrainingSequence[]> {
  if (config.sftProbe === 0) return [];
  await writeFile(
    paths.probeDemonstrations,
    `${probeDemonstrationLines(config.sftProbe, config.seed).join('\n')}\n`,
  );
  return buildBatch(session.tokenizer, await readDemonstrations(paths.probeDemonstrations), {
    vocabSize: session.engine.model.vocabSize,
    maxTokens: session.maxTokens,
  }).sequences;
}

export async function warmStart(
  config: DemoConfig,
  paths: DemoPaths,
  deps: { store: Store; progress: DemoProgress; inferenceUrls: readonly string[]; stop?: StopSignal },
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
  const trainer = await Trainer.open(demoTrainConfig('sft', config, paths, deps.inferenceUrls, false), {
    store: deps.store,
    progress: deps.progress,
  });
  const { session } = trainer;
  const steps = config.sftEpochs * Math.ceil(config.sftDemonstrations / config.sftBatch);
  const bar = deps.progress.bar('warm start', { unit: 'steps', total: steps, countsSteps: true });
  const probe = await probeSequences(config, paths, session);
  const quitTokenId = session.tokenizer.encode(giveUpAnswer)[0] as number;
  let copy: CopyAccuracy | undefined;
  let reached = false;
  try {
    const report = await runSft(trainer, {
      ...(config.sftCopyWeight === 1
        ? {}
        : { prepare: (sequence) => copyWeighted(sequence, decodeOf(session), config.sftCopyWeight) }),
      afterStep: async (_step, taken) => {
        // Ctrl-C stops after this step: nothing is published, so a rerun redoes the warm start.
        deps.stop?.check();
        if (probe.length === 0 || (taken % copyProbeEvery !== 0 && taken !== steps)) return 'continue';
        copy = await copyAccuracy(session.engine, probe, decodeOf(session), {
          padTokenId: session.tokenizer.padTokenId,
          quitTokenId,
        });
        reached =
          copyReached(copy, config.sftStopAt) &&
          (config.sftQuitWithin > 1 ||
            Math.abs((copy.quit as number) - config.demonstrationGiveUpRate) <= config.sftQuitWithin);
        deps.progress.line(`warm start step ${taken}: copy ${describeCopyAccuracy(copy)}`);
        return reached && config.sftStopAt <= 1 ? 'stop' : 'continue';
      },
    });
    if (report.kind !== 'published')
      throw new Error(`the warm start did not publish an adapter (${report.kind})`);
    const version = (await publishedVersions(deps.store, demoPolicyName))[0];
    if (!version) throw new Error('the warm start published no version');
    return { version, reused: false, steps: report.steps, ...(copy ? { copy, copyReached: reached } : {}) };
  } finally {
    bar.end();
    await trainer.close();
  }
}
