// The demo's SFT warm start (cli/demo/warm-start.ts) as a throughput figure: the same model (the demo
// preset, embedding std and tokenizer pieces), the same demonstrations and the same TrainConfig
// (demoTrainConfig: LoRA rank, frozen orthogonal A, batch, learning rate, micro-batch budget), trained
// for a few steps in this thread and on N data-parallel workers, taking turns step by step so a shared
// machine's load falls on both. Used by bench:learn; `npx tsx bench/warm-start-throughput.ts
// [--backend NAME] [--workers N] [--steps K]` runs it alone. Reports, does not assert.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolveDemoConfig } from '../cli/demo/demo-config.ts';
import { demoPaths } from '../cli/demo/demo-paths.ts';
import { demoExtraPieces } from '../cli/demo/start-services.ts';
import { demoTrainConfig } from '../cli/demo/trainer-config.ts';
import { demonstrationLines } from '../cli/demo/warm-start.ts';
import type { SelectedBackend } from '../model/backend.ts';
import { initModelDir } from '../model/init-model-dir.ts';
import { setLoraATrainable } from '../model/lora.ts';
import { loadModel, type PolicyModel } from '../model/policy-model.ts';
import { loadTokenizer } from '../model/tokenizer/load-tokenizer.ts';
import { AdamW } from '../trainer/grpo/adamw.ts';
import { buildBatch } from '../trainer/train/build-batch.ts';
import type { TrainConfig } from '../trainer/train/train-config.ts';
import { readDemonstrations } from '../trainer/train/sft-steps.ts';
import { type TrainStepOptions, trainStep } from '../trainer/engine/tfjs/train-step.ts';
import { TrainWorkerPool } from '../trainer/engine/tfjs/workers/train-worker-pool.ts';
import { defaultWorkerCount } from '../trainer/engine/tfjs/workers/worker-count.ts';
import { flagValue, selectBenchBackend } from './backend-flag.ts';

export interface WarmStartRate {
  readonly workers: number;
  readonly msPerStep: number;
  /** Mean of the slowest worker's own compute per step; undefined in this thread. */
  readonly workerMs: number | undefined;
  readonly tokensPerSecond: number;
  readonly trainedPerSecond: number;
}

/**
 * Adds the warm start's adapter to `model` as 'train' (the demo's LoRA settings, A frozen or not) and
 * returns its AdamW, as the trainer session sets them up.
 */
export function warmStartAdapter(model: PolicyModel, config: TrainConfig): AdamW {
  const { r, alpha, dropout, targets, useRslora, initA, freezeA } = config.lora;
  model.addAdapter('train', { r, alpha, dropout, targets, useRslora, initA }, { seed: config.seed });
  setLoraATrainable(model.adapter('train'), !freezeA);
  return new AdamW(model.trainableVariables('train'), {
    learningRate: config.sft.learningRate,
    beta1: config.loss.adamBeta1,
    beta2: config.loss.adamBeta2,
    eps: config.loss.adamEps,
    weightDecay: config.loss.weightDecay,
  });
}

/** Tokens/s of the warm start's steps with 1 worker (this thread) and with `workers`. */
export async function warmStartThroughput(
  backend: SelectedBackend,
  options: { workers: number; steps: number },
): Promise<WarmStartRate[]> {
  const root = await mkdtemp(join(tmpdir(), 'edgerl-warm-start-bench-'));
  try {
    const demo = resolveDemoConfig({});
    const paths = demoPaths(root);
    const config = demoTrainConfig('sft', demo, paths, ['http://127.0.0.1:9/v1'], false);
    await initModelDir(paths.model, {
      preset: demo.preset,
      architecture: 'qwen2',
      seed: demo.seed,
      dtype: 'F32',
      embeddingStd: demo.embeddingStd,
      extraPieces: demoExtraPieces,
    });
    const perStep = config.sft.sequencesPerStep;
    const count = perStep * options.steps * 2 + perStep; // both variants, plus a warm-up step each
    await writeFile(
      paths.demonstrations,
      `${demonstrationLines(count, demo.seed, demo.demonstrationGiveUpRate).join('\n')}\n`,
    );
    const [model, tokenizer] = await Promise.all([loadModel(paths.model), loadTokenizer(paths.model)]);
    const { sequences } = buildBatch(tokenizer, await readDemonstrations(paths.demonstrations), {
      vocabSize: model.config.vocabSize,
      maxTokens: model.config.maxPositionEmbeddings,
    });
    const optimizer = warmStartAdapter(model, config);
    const pool = new TrainWorkerPool({
      size: options.workers,
      backend: backend.choice,
      model: { kind: 'dir', dir: paths.model },
    });
    const stepOptions: TrainStepOptions = {
      objective: { kind: 'sft' },
      microBatchTokens: config.loss.microBatchTokens,
      maxGradNorm: config.loss.maxGradNorm,
      learningRate: config.sft.learningRate,
      padTokenId: tokenizer.padTokenId,
    };
    const variants = [stepOptions, { ...stepOptions, workers: pool }];
    const totals = variants.map(() => ({ seconds: 0, workerSeconds: 0, tokens: 0, trained: 0, steps: 0 }));
    let at = 0;
    const next = () => {
      const chunk = sequences.slice(at, at + perStep);
      at += perStep;
      return chunk.length > 0 ? chunk : sequences.slice(0, perStep);
    };
    try {
      for (const variant of variants) await trainStep(model, 'train', optimizer, next(), variant);
      for (let step = 0; step < options.steps; step++) {
        for (const [index, variant] of variants.entries()) {
          const chunk = next();
          const result = await trainStep(model, 'train', optimizer, chunk, variant);
          const total = totals[index] as (typeof totals)[number];
          total.seconds += result.seconds;
          total.workerSeconds += result.workerSeconds ? Math.max(...result.workerSeconds) : 0;
          total.tokens += result.tokens;
          total.trained += chunk.reduce((sum, sequence) => sum + sequence.trainedTokens, 0);
          total.steps += 1;
        }
      }
    } finally {
      await pool.close();
      optimizer.dispose();
      model.dispose();
    }
    return totals.map((total, index) => ({
      workers: index === 0 ? 1 : options.workers,
      msPerStep: (1000 * total.seconds) / total.steps,
      workerMs: index === 0 ? undefined : (1000 * total.workerSeconds) / total.steps,
      tokensPerSecond: total.tokens / total.seconds,
      trainedPerSecond: total.trained / total.seconds,
    }));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Lines for a report: one per worker count, the speed-up against this thread. */
export function describeWarmStartRates(rates: readonly WarmStartRate[]): string[] {
  const base = rates[0]?.tokensPerSecond ?? Number.NaN;
  return rates.map(
    (rate) =>
      `  SFT warm start, ${rate.workers} worker(s): ${rate.tokensPerSecond.toFixed(0)} tokens/s ` +
      `(${rate.trainedPerSecond.toFixed(0)} trained), ${rate.msPerStep.toFixed(0)} ms/step` +
      `${rate.workerMs === undefined ? '' : `, slowest worker ${rate.workerMs.toFixed(0)} ms`}, ` +
      `${(rate.tokensPerSecond / base).toFixed(2)}× of 1 worker`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const backend = await selectBenchBackend();
  const workers = Number(flagValue('workers') ?? defaultWorkerCount(backend.choice));
  const steps = Number(flagValue('steps') ?? 20);
  const rates = await warmStartThroughput(backend, { workers, steps });
  console.log(describeWarmStartRates(rates).join('\n'));
}
