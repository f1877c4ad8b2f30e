// npm run bench:train [-- --backend NAME] [--models tiny,small,qwen2.5-0.5b] [--workers N] — throughput
// of the trainer's optimiser step (trainer/train/train-step.ts: micro-batched forward + backward into
// the LoRA adapter, the GRPO CISPO loss, global-norm clip, AdamW) on the tiny and small presets, and
// on a hardware GPU Qwen2.5-0.5B's shape (bench/bench-models.ts), in this thread (1 worker) and on N
// data-parallel workers (trainer/train/workers/; N: --workers, else the backend's default, one per
// core on wasm/cpu): ms/step, processed and trained tokens per second, achieved GFLOP/s, the speed-up,
// and the workers' own compute time per step, beside the same backend's single-thread plain matmul
// rate measured in the same run (the ceiling, bench/matmul-ceiling.ts). Backend: --backend, else
// EDGERL_BACKEND, else the first available (bench/backend-flag.ts). Reports, does not assert.
//
// FLOPs are counted analytically as in bench/model.ts (2 per multiply-add, matmuls only; elementwise
// ops, softmax, norms and the optimiser are not counted). Per token with keys S = T (full score
// matrix), L layers, P projection weights per layer, H heads of size hd, LoRA rank r on projections
// with (in, out):  forward = L·(2P + 4·S·H·hd + Σ 2r(in+out)) + 2·D·V,
//                  backward = L·(2P + 8·S·H·hd + Σ 4r(in+out)) + 4·D·V.
import { availableParallelism, loadavg } from 'node:os';
import { AdamW } from '../trainer/grpo/adamw.ts';
import { clipDefaults } from '../trainer/grpo/loss-config.ts';
import { type ModelConfig, projections } from '../model/hf-config.ts';
import { PolicyModel } from '../model/policy-model.ts';
import { projectionShape } from '../model/weight-names.ts';
import type { TrainingSequence } from '../trainer/train/build-batch.ts';
import { type TrainStepOptions, trainStep } from '../trainer/train/train-step.ts';
import { TrainWorkerPool } from '../trainer/train/workers/train-worker-pool.ts';
import { defaultWorkerCount } from '../trainer/train/workers/worker-count.ts';
import { shareHostWeights } from '../trainer/train/workers/worker-protocol.ts';
import { flagValue, selectBenchBackend } from './backend-flag.ts';
import { benchModels, benchWeights, describeBenchModel } from './bench-models.ts';
import { matmulCeiling } from './matmul-ceiling.ts';

const sequencesPerStep = 8;
const positions = 128;
/** The last half of each sequence is "assistant" (trained); the first half is prompt. */
const trainedPerSequence = positions / 2;
const rank = 8;
const microBatchTokens = 4 * positions; // two micro-batches of 4 sequences: exercises accumulation

function flopsPerToken(config: ModelConfig, keys: number): number {
  const { hiddenSize: d, vocabSize: v, numHeads: h, headDim: hd, numLayers: l } = config;
  let weights = 0;
  let lora = 0;
  for (const projection of projections) {
    const [out, input] = projectionShape(config, projection);
    weights += out * input;
    lora += 2 * rank * (input + out);
  }
  const attention = 4 * keys * h * hd;
  const forward = l * (2 * weights + attention + lora) + 2 * d * v;
  const backward = l * (2 * weights + 2 * attention + 2 * lora) + 4 * d * v;
  return forward + backward;
}

function syntheticBatch(vocabSize: number, seed: number): TrainingSequence[] {
  return Array.from({ length: sequencesPerStep }, (_, row) => {
    const ids = Array.from({ length: positions }, (_, t) => (seed + row * 131 + t * 7919) % vocabSize);
    const targetMask = Array.from({ length: positions - 1 }, (_, t) =>
      t >= positions - 1 - trainedPerSequence ? 1 : 0,
    );
    return {
      trajectoryId: `bench-${row}`,
      groupId: null,
      ids,
      targetMask,
      // Recorded logprobs near a uniform model's, so ratios sit near the clip band's middle.
      oldLogprobs: targetMask.map((bit) => (bit ? -Math.log(vocabSize) : Number.NaN)),
      onPolicy: targetMask.map(() => 0),
      advantage: row % 2 === 0 ? 0.5 : -0.5,
      trainedTokens: trainedPerSequence,
    };
  });
}

const backend = await selectBenchBackend();
const matmulGflops = (await matmulCeiling(backend)).gflops;
const workersFlag = flagValue('workers');
const workers = workersFlag === undefined ? defaultWorkerCount(backend.choice) : Number(workersFlag);
if (!(Number.isInteger(workers) && workers >= 1))
  throw new Error(`--workers must be an integer >= 1, got ${workersFlag}`);

interface Measured {
  seconds: number;
  /** Sum over steps of the slowest worker's own compute time (with workers). */
  workerSeconds: number;
  /** Process CPU time (every thread: getrusage), seconds. */
  cpuSeconds: number;
  steps: number;
}

interface Rate {
  readonly seconds: number;
  readonly workerSeconds: number | undefined;
  readonly cpuSeconds: number;
}

/**
 * Mean step time of each option set after one warm-up step each (which starts the workers), taking
 * turns step by step until each has run at least `minMs`: on a shared machine, load that comes and
 * goes then falls on both alike, so their ratio holds even when the absolute figures drift.
 */
async function measureInTurns(
  model: PolicyModel,
  optimizer: AdamW,
  variants: readonly TrainStepOptions[],
  minMs: number,
): Promise<Rate[]> {
  const vocabSize = model.config.vocabSize;
  for (const options of variants)
    await trainStep(model, 'bench', optimizer, syntheticBatch(vocabSize, 0), options);
  const totals: Measured[] = variants.map(() => ({ seconds: 0, workerSeconds: 0, cpuSeconds: 0, steps: 0 }));
  let seed = 1;
  while (totals.some((total) => total.seconds * 1000 < minMs)) {
    for (const [index, options] of variants.entries()) {
      const total = totals[index] as Measured;
      const started = performance.now();
      const cpu = process.cpuUsage();
      const result = await trainStep(model, 'bench', optimizer, syntheticBatch(vocabSize, seed++), options);
      total.seconds += (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      total.cpuSeconds += (used.user + used.system) / 1e6;
      if (result.workerSeconds) total.workerSeconds += Math.max(...result.workerSeconds);
      total.steps += 1;
    }
  }
  return totals.map((total, index) => ({
    seconds: total.seconds / total.steps,
    workerSeconds: variants[index]?.workers ? total.workerSeconds / total.steps : undefined,
    cpuSeconds: total.cpuSeconds / total.steps,
  }));
}

const rows: string[][] = [];
for (const entry of benchModels(backend, flagValue('models'))) {
  console.log(describeBenchModel(entry));
  const { name: preset, config } = entry;
  const host = benchWeights(config, 1);
  const model = PolicyModel.fromHostWeights(config, host);
  model.addAdapter('bench', { r: rank, alpha: 2 * rank, targets: [...projections], initLoraWeights: false });
  const optimizer = new AdamW(model.trainableVariables('bench'), {
    learningRate: 1e-5,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.1,
  });
  const options: TrainStepOptions = {
    objective: {
      kind: 'grpo',
      loss: { lossKind: 'cispo', clip: clipDefaults.cispo, aggregation: 'token-mean', beta: 0 },
    },
    microBatchTokens,
    maxGradNorm: 1,
    learningRate: 1e-5,
    padTokenId: 0,
  };
  const minMs = preset === 'tiny' ? 4000 : 8000;
  // The workers read the base weights from one shared buffer; each backend copies them once.
  const pool =
    workers > 1 || workersFlag !== undefined
      ? new TrainWorkerPool({
          size: workers,
          backend: backend.choice,
          model: { kind: 'host', config, tensors: shareHostWeights(host) },
        })
      : undefined;
  let measured: Rate[];
  try {
    measured = await measureInTurns(
      model,
      optimizer,
      pool ? [options, { ...options, workers: pool }] : [options],
      minMs,
    );
  } finally {
    await pool?.close();
  }
  const single = measured[0] as { seconds: number };
  const runs = measured.map((run, index) => [index === 0 ? 1 : workers, run] as const);
  const processed = sequencesPerStep * positions;
  const trained = sequencesPerStep * trainedPerSequence;
  // Logprobs are of positions 1..T−1; every position runs forward and backward.
  const flops = flopsPerToken(config, positions) * sequencesPerStep * (positions - 1);
  for (const [count, run] of runs) {
    const gflops = flops / run.seconds / 1e9;
    rows.push([
      preset,
      `${sequencesPerStep}×${positions}`,
      String(count),
      (run.seconds * 1000).toFixed(0),
      run.workerSeconds === undefined ? '—' : (run.workerSeconds * 1000).toFixed(0),
      (run.cpuSeconds * 1000).toFixed(0),
      (run.cpuSeconds / run.seconds).toFixed(2),
      (processed / run.seconds).toFixed(0),
      (trained / run.seconds).toFixed(0),
      gflops.toFixed(2),
      `${((100 * gflops) / matmulGflops).toFixed(1)} %`,
      `${(single.seconds / run.seconds).toFixed(2)}×`,
    ]);
  }
  optimizer.dispose();
  model.dispose();
}

const header = [
  'preset',
  'B×T',
  'workers',
  'ms/step',
  'worker ms',
  'CPU ms',
  'cores',
  'tokens/s',
  'trained tok/s',
  'GFLOP/s',
  'of matmul',
  'speed-up',
];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] as number)).join('  ');
console.log(line(header));
for (const row of rows) console.log(line(row));
console.log(
  `One optimiser step = ${sequencesPerStep} sequences of ${positions} tokens (last ${trainedPerSequence} trained) in ` +
    `micro-batches of ${microBatchTokens} padded tokens; LoRA rank ${rank} on all 7 projections; matmul FLOPs only. ` +
    `"of matmul": of the single-thread ${matmulGflops.toFixed(1)} GFLOP/s ceiling above. "worker ms": the slowest ` +
    `worker's own compute per step (adapter load, forward, backward, gradient read-back); the rest of ms/step is ` +
    `the coordinator (sharding, summing, clip, AdamW) and messaging. "CPU ms": this process's CPU time per step, ` +
    `every thread; "cores": CPU time / wall time, the cores the step got. ${availableParallelism()} core(s) here; ` +
    'on a shared machine other load takes cores from the workers (load average at the end: ' +
    `${loadavg()[0]?.toFixed(2)}).`,
);
