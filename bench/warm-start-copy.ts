// The demo's SFT warm start alone, on several seeds, with the copy probe (cli/demo/copy-probe.ts) every
// few steps: how soon each seed's warm start learns to copy keys and values, and whether it does at all.
// Cheaper than bench:learn (no serving, RL or A/B): one seed is a few minutes on 2 cores. Same model,
// demonstrations, tokens and optimiser as the demo (demoTrainConfig), trained in this thread unless
// --workers N. Flags (each default is the demo's): --seeds 1,2 --steps N (the cap) --every K --lr X
// --warmup K --schedule constant|cosine --give-up-rate X --batch N --demos N --probe N (held-out
// demonstrations) --stop-at X (stop on the demo's copy rule, copyReached; its give-up check is left out). Reports, does not assert.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveDemoConfig } from '../cli/demo/demo-config.ts';
import { demoPaths } from '../cli/demo/demo-paths.ts';
import { demoExtraPieces } from '../cli/demo/start-services.ts';
import { demoTrainConfig } from '../cli/demo/trainer-config.ts';
import { demonstrationLines, probeDemonstrationLines } from '../cli/demo/warm-start.ts';
import {
  copyAccuracy,
  copyReached,
  copyShare,
  copyWeighted,
  describeCopyAccuracy,
} from '../cli/demo/copy-probe.ts';
import { initModelDir } from '../model/init-model-dir.ts';
import { createRng } from '../model/rng.ts';
import { loadTokenizer } from '../model/tokenizer/load-tokenizer.ts';
import { buildBatch } from '../trainer/train/build-batch.ts';
import { learningRateFactor } from '../trainer/train/lr-schedule.ts';
import { TfjsEngine } from '../trainer/engine/tfjs/tfjs-engine.ts';
import { readDemonstrations } from '../trainer/train/sft-steps.ts';
import { flagValue, selectBenchBackend } from './backend-flag.ts';

const number = (name: string) => {
  const value = flagValue(name);
  return value === undefined ? undefined : Number(value);
};
const seeds = (flagValue('seeds') ?? '1').split(',').map(Number);
const every = number('every') ?? 50;
const probeCount = number('probe');
const stopAt = number('stop-at');
const warmup = number('warmup') ?? 0;
const schedule = (flagValue('schedule') ?? 'constant') as 'constant' | 'cosine';
const workers = number('workers') ?? 0;
await selectBenchBackend();

for (const seed of seeds) {
  const demo = resolveDemoConfig({
    seed,
    ...(number('lr') === undefined ? {} : { sftLearningRate: number('lr') }),
    ...(number('give-up-rate') === undefined ? {} : { demonstrationGiveUpRate: number('give-up-rate') }),
    ...(number('batch') === undefined ? {} : { sftBatch: number('batch') }),
    ...(number('demos') === undefined ? {} : { sftDemonstrations: number('demos') }),
    ...(number('embedding-std') === undefined ? {} : { embeddingStd: number('embedding-std') }),
  });
  const cap = number('steps') ?? Math.ceil(demo.sftDemonstrations / demo.sftBatch);
  const root = await mkdtemp(join(tmpdir(), 'edgerl-warm-copy-'));
  const paths = demoPaths(root);
  const config = demoTrainConfig('sft', demo, paths, ['http://127.0.0.1:9/v1'], false);
  await initModelDir(paths.model, {
    preset: demo.preset,
    architecture: 'qwen2',
    seed,
    dtype: 'F32',
    embeddingStd: demo.embeddingStd,
    extraPieces: demoExtraPieces,
  });
  const demonstrations = Math.max(demo.sftDemonstrations, cap * demo.sftBatch);
  await writeFile(
    paths.demonstrations,
    `${demonstrationLines(demonstrations, seed, demo.demonstrationGiveUpRate).join('\n')}\n`,
  );
  const probeFile = join(root, 'probe.jsonl');
  await writeFile(probeFile, `${probeDemonstrationLines(probeCount ?? demo.sftProbe, seed).join('\n')}\n`);
  const [engine, tokenizer] = await Promise.all([
    // --workers N: N gradient threads (the engine's pool); 0 or 1: this thread.
    TfjsEngine.open(paths.model, { workers: Math.max(1, workers), log: () => {} }),
    loadTokenizer(paths.model),
  ]);
  const model = engine.runtime;
  const render = async (file: string) =>
    buildBatch(tokenizer, await readDemonstrations(file), {
      vocabSize: model.config.vocabSize,
      maxTokens: model.config.maxPositionEmbeddings,
    }).sequences;
  const copyWeight = number('copy-weight') ?? 1;
  const decodeToken = (id: number) => tokenizer.decodeToken(id);
  const rendered = await render(paths.demonstrations);
  const train = copyWeight === 1 ? rendered : rendered.map((s) => copyWeighted(s, decodeToken, copyWeight));
  const probe = await render(probeFile);
  // The SFT loop's order (sft.ts): one seeded shuffle per epoch.
  const rng = createRng(config.seed, 0);
  for (let index = train.length - 1; index > 0; index--) {
    const other = Math.floor(rng.next() * (index + 1));
    [train[index], train[other]] = [
      train[other] as (typeof train)[number],
      train[index] as (typeof train)[number],
    ];
  }
  const { r, alpha, dropout, targets, useRslora, initA, freezeA } = config.lora;
  await engine.startAdapter({
    kind: 'fresh',
    settings: { r, alpha, dropout, targets, useRslora, initA },
    seed: config.seed,
  });
  await engine.resetOptimizer({
    learningRate: config.sft.learningRate,
    beta1: config.loss.adamBeta1,
    beta2: config.loss.adamBeta2,
    eps: config.loss.adamEps,
    weightDecay: config.loss.weightDecay,
    trainA: !freezeA,
  });
  const decode = decodeToken;
  const started = performance.now();
  let lossSum = 0;
  let tokenSum = 0; // steps since the last report
  const curve: string[] = [];
  process.stdout.write(
    `seed ${seed}: copy weight ${copyWeight}, lr ${demo.sftLearningRate} (${schedule}, warm-up ${warmup}), batch ${demo.sftBatch}, give-up ${demo.demonstrationGiveUpRate}, cap ${cap}, load ${loadavg()[0]?.toFixed(1)}\n`,
  );
  try {
    for (let step = 1; step <= cap; step++) {
      const at = ((step - 1) * demo.sftBatch) % train.length;
      const chunk = train.slice(at, at + demo.sftBatch);
      const factor = learningRateFactor(step, {
        kind: schedule,
        warmupSteps: warmup,
        decaySteps: schedule === 'cosine' ? cap : null,
      });
      const result = await engine.step({
        sequences: chunk,
        objective: { kind: 'sft' },
        microBatchTokens: config.loss.microBatchTokens,
        maxGradNorm: config.loss.maxGradNorm,
        learningRate: demo.sftLearningRate * factor,
        padTokenId: tokenizer.padTokenId,
      });
      lossSum += result.microBatches.reduce((sum, sums) => sum + sums.loss, 0);
      tokenSum += 1;
      if (step % every === 0 || step === cap) {
        const accuracy = await copyAccuracy(engine, probe, decode, {
          padTokenId: tokenizer.padTokenId,
        });
        const seconds = (performance.now() - started) / 1000;
        const line = `  step ${step} (${seconds.toFixed(0)} s): loss ${(lossSum / Math.max(1, tokenSum)).toFixed(3)}, ${describeCopyAccuracy(accuracy)}`;
        process.stdout.write(`${line}\n`);
        curve.push(
          `${step}:${(100 * copyShare(accuracy, 'nextKey')).toFixed(0)}/${(100 * copyShare(accuracy, 'value')).toFixed(0)}`,
        );
        lossSum = 0;
        tokenSum = 0;
        if (stopAt !== undefined && copyReached(accuracy, stopAt)) break;
      }
    }
  } finally {
    await engine.close();
    await rm(root, { recursive: true, force: true });
  }
  process.stdout.write(`seed ${seed} curve (step:next-key%/value%): ${curve.join(' ')}\n`);
}
