// npm run bench:train [-- --backend NAME] [--models tiny,small,qwen2.5-0.5b] [--workers N]
//   [--profile [--profile-top N]] [--min-ms N] [--engine torch] —
// (--engine torch: both engines and a direct PyTorch step instead, bench/train-torch.ts.)
// throughput of the trainer's optimiser step (trainer/train/train-step.ts: micro-batched forward +
// backward into the LoRA adapter, the loss, global-norm clip, AdamW) on the tiny and small presets, and
// on a hardware GPU Qwen2.5-0.5B's shape (bench/bench-models.ts), in this thread (1 worker) and on N
// data-parallel workers (trainer/train/workers/; N: --workers, else the backend's default, one per core
// on wasm/cpu), taking turns step by step so a shared machine's load falls on both alike: processed and
// trained tokens per second, achieved GFLOP/s, the speed-up and the slowest worker's own compute time,
// beside the same backend's single-thread plain matmul rate measured in the same run (the ceiling,
// bench/matmul-ceiling.ts). Two steps per model: GRPO (CISPO, LoRA r 8 on all projections, A
// and B trained, two micro-batches) and SFT as the demo's warm start runs it (cli/demo/demo-config.ts:
// r 64, alpha 128, orthogonal A frozen so only B trains, one micro-batch). `--profile` adds each step's
// top kernels by time (bench/kernel-profile.ts, tf.profile). Beside wall time, each row has the
// process's CPU time per step and its share of the matmul's (both single-threaded on CPU backends,
// so on a machine shared with other jobs they compare the work done rather than the wait for a
// core). Backend: --backend, else EDGERL_BACKEND,
// else the first available (bench/backend-flag.ts). Reports, does not assert.
//
// FLOPs are counted analytically as in bench/model.ts (2 per multiply-add, matmuls only; elementwise
// ops, softmax, norms and the optimiser are not counted): the products the step needs. Per token with
// keys S = T (full score matrix), L layers, P projection weights per layer, H heads of size hd, LoRA
// rank r on projections with (in, out):
//   layers, every position:      forward L·(2P + 4·S·H·hd + Σ 2r(in+out)), backward L·(2P + 8·S·H·hd + Σ 4r(in+out)),
//   output head, trained tokens: forward 2·D·V, backward 2·D·V (dh = (onehot − softmax)·W; the loss
//   reads no other logprob, and the logits need no second computation),
// where a frozen A drops its own gradient: Σ 2r(in + 2·out) instead of Σ 4r(in+out).
import { availableParallelism, loadavg } from 'node:os';
import { AdamW } from '../trainer/grpo/adamw.ts';
import { clipDefaults } from '../trainer/grpo/loss-config.ts';
import { type ModelConfig, projections } from '../model/hf-config.ts';
import { setLoraATrainable } from '../model/lora.ts';
import { PolicyModel } from '../model/policy-model.ts';
import { projectionShape } from '../model/weight-names.ts';
import type { TrainingSequence } from '../trainer/engine/training-sequence.ts';
import { type TrainStepOptions, trainStep } from '../trainer/engine/tfjs/train-step.ts';
import { TrainWorkerPool } from '../trainer/engine/tfjs/workers/train-worker-pool.ts';
import { defaultWorkerCount } from '../trainer/engine/tfjs/workers/worker-count.ts';
import { shareHostWeights } from '../trainer/engine/tfjs/workers/worker-protocol.ts';
import { flagValue, selectBenchBackend } from './backend-flag.ts';
import { benchModels, benchWeights, describeBenchModel } from './bench-models.ts';
import { formatKernelProfile, profileKernels } from './kernel-profile.ts';
import { matmulCeiling, matmulRate } from './matmul-ceiling.ts';

const sequencesPerStep = 8;
const positions = 128;
/** The last half of each sequence is "assistant" (trained); the first half is prompt. */
const trainedPerSequence = positions / 2;
const profile = process.argv.includes('--profile');
const profileTop = Number(flagValue('profile-top') ?? 10);
const minMsFlag = flagValue('min-ms');

interface StepCase {
  readonly name: 'grpo' | 'sft';
  readonly rank: number;
  readonly alpha: number;
  readonly trainA: boolean;
  readonly options: TrainStepOptions;
}

const cases: readonly StepCase[] = [
  {
    name: 'grpo',
    rank: 8,
    alpha: 16,
    trainA: true,
    options: {
      objective: {
        kind: 'grpo',
        loss: { lossKind: 'cispo', clip: clipDefaults.cispo, aggregation: 'token-mean', beta: 0 },
      },
      microBatchTokens: 4 * positions, // two micro-batches of 4 sequences: exercises accumulation
      maxGradNorm: 1,
      learningRate: 1e-5,
      padTokenId: 0,
    },
  },
  {
    // The demo's SFT warm start (cli/demo/demo-config.ts defaults): LoRA-FA, the default micro-batch.
    name: 'sft',
    rank: 64,
    alpha: 128,
    trainA: false,
    options: {
      objective: { kind: 'sft' },
      microBatchTokens: 8192,
      maxGradNorm: 1,
      learningRate: 1e-5,
      padTokenId: 0,
    },
  },
];

/** Matmul FLOPs of one row's forward and backward: `positions` tokens, `trained` of them in the loss. */
function rowFlops(
  config: ModelConfig,
  rank: number,
  trainA: boolean,
  positions: number,
  trained: number,
): number {
  const { hiddenSize: d, vocabSize: v, numHeads: h, headDim: hd, numLayers: l } = config;
  let weights = 0;
  let loraForward = 0;
  let loraBackward = 0;
  for (const projection of projections) {
    const [out, input] = projectionShape(config, projection);
    weights += out * input;
    loraForward += 2 * rank * (input + out);
    loraBackward += trainA ? 4 * rank * (input + out) : 2 * rank * (input + 2 * out);
  }
  const attention = 4 * positions * h * hd; // keys S = T
  const perToken =
    l * (2 * weights + attention + loraForward) + l * (2 * weights + 2 * attention + loraBackward);
  return perToken * positions + 4 * d * v * trained;
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
if (flagValue('engine') === 'torch') {
  // Both engines through the seam, beside the step written directly in PyTorch (bench/train-torch.ts).
  const { benchTorchTrain } = await import('./train-torch.ts');
  const models = (flagValue('models') ?? 'tiny,small,qwen2.5-0.5b').split(',');
  await benchTorchTrain(backend, models as ('tiny' | 'small' | 'qwen2.5-0.5b')[]);
  process.exit(0);
}
const ceiling = await matmulCeiling(backend);
const workersFlag = flagValue('workers');
const workers = workersFlag === undefined ? defaultWorkerCount(backend.choice) : Number(workersFlag);
if (!(Number.isInteger(workers) && workers >= 1))
  throw new Error(`--workers must be an integer >= 1, got ${workersFlag}`);

interface Rate {
  /** Wall time per step. */
  readonly seconds: number;
  /** The slowest worker's own compute per step (with workers). */
  readonly workerSeconds: number | undefined;
  /** This process's CPU time per step (every thread: user + system). */
  readonly cpuSeconds: number;
}

/**
 * Mean step time of each variant after one warm-up step each (which starts the workers), taking turns
 * step by step until each has run at least `minMs`: load that comes and goes falls on both alike, so
 * their ratio holds even when the absolute figures drift.
 */
async function measureInTurns(
  run: (seed: number, options: TrainStepOptions) => Promise<{ workerSeconds?: readonly number[] }>,
  variants: readonly TrainStepOptions[],
  minMs: number,
): Promise<Rate[]> {
  for (const options of variants) await run(0, options);
  const totals = variants.map(() => ({ seconds: 0, workerSeconds: 0, cpuSeconds: 0, steps: 0 }));
  let seed = 1;
  while (totals.some((total) => total.seconds * 1000 < minMs)) {
    for (const [index, options] of variants.entries()) {
      const total = totals[index] as (typeof totals)[number];
      const started = performance.now();
      const cpu = process.cpuUsage();
      const result = await run(seed++, options);
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
const profiles: string[] = [];
for (const entry of benchModels(backend, flagValue('models'))) {
  console.log(describeBenchModel(entry));
  const { name: preset, config } = entry;
  const vocabSize = config.vocabSize;
  const host = benchWeights(config, 1);
  const model = PolicyModel.fromHostWeights(config, host);
  // The workers read the base weights from one shared buffer; each backend copies them once. They
  // follow the coordinator's adapter, rebuilt when its shape changes (the GRPO and SFT cases differ).
  const pool =
    workers > 1 || workersFlag !== undefined
      ? new TrainWorkerPool({
          size: workers,
          backend: backend.choice,
          model: { kind: 'host', config, tensors: shareHostWeights(host) },
        })
      : undefined;
  try {
    for (const step of cases) {
      const adapter = model.addAdapter(step.name, {
        r: step.rank,
        alpha: step.alpha,
        targets: [...projections],
        initLoraWeights: false,
        initA: step.trainA ? 'kaiming-uniform' : 'orthogonal',
      });
      if (!step.trainA) setLoraATrainable(adapter, false);
      const optimizer = new AdamW(model.trainableVariables(step.name), {
        learningRate: 1e-5,
        beta1: 0.9,
        beta2: 0.99,
        eps: 1e-8,
        weightDecay: 0.1,
      });
      const run = (seed: number, options: TrainStepOptions = step.options) =>
        trainStep(model, step.name, optimizer, syntheticBatch(vocabSize, seed), options);
      const minMs = minMsFlag !== undefined ? Number(minMsFlag) : preset === 'tiny' ? 4000 : 8000;
      // The shared machine's load drifts: the ceiling this step is compared with is re-timed beside it.
      const local = await matmulRate(ceiling.n, 1000);
      const measured = await measureInTurns(
        run,
        pool ? [step.options, { ...step.options, workers: pool }] : [step.options],
        minMs,
      );
      const single = measured[0] as Rate;
      const processed = sequencesPerStep * positions;
      const trained = sequencesPerStep * trainedPerSequence;
      // Every position runs through the layers forward and backward; the head only on trained ones.
      const flops =
        sequencesPerStep * rowFlops(config, step.rank, step.trainA, positions, trainedPerSequence);
      for (const [index, rate] of measured.entries()) {
        const gflops = flops / rate.seconds / 1e9;
        const cpuGflops = flops / rate.cpuSeconds / 1e9;
        rows.push([
          preset,
          step.name,
          `r ${step.rank}${step.trainA ? '' : ', A frozen'}`,
          `${sequencesPerStep}×${positions}`,
          String(index === 0 ? 1 : workers),
          (rate.seconds * 1000).toFixed(0),
          rate.workerSeconds === undefined ? '—' : (rate.workerSeconds * 1000).toFixed(0),
          (processed / rate.seconds).toFixed(0),
          (trained / rate.seconds).toFixed(0),
          gflops.toFixed(2),
          local.gflops.toFixed(1),
          `${((100 * gflops) / local.gflops).toFixed(1)} %`,
          `${(single.seconds / rate.seconds).toFixed(2)}×`,
          (rate.cpuSeconds * 1000).toFixed(0),
          (rate.cpuSeconds / rate.seconds).toFixed(2),
          `${((100 * cpuGflops) / local.cpuGflops).toFixed(1)} %`,
        ]);
      }
      if (profile) {
        const measured = await profileKernels(() => run(1));
        profiles.push(...formatKernelProfile(`${preset} ${step.name} step`, measured, profileTop));
      }
      optimizer.dispose();
      model.removeAdapter(step.name);
    }
  } finally {
    await pool?.close();
  }
  model.dispose();
}

const header = [
  'preset',
  'step',
  'adapter',
  'B×T',
  'workers',
  'ms/step',
  'worker ms',
  'tokens/s',
  'trained tok/s',
  'GFLOP/s',
  'matmul GFLOP/s',
  'of matmul',
  'speed-up',
  'CPU ms/step',
  'cores',
  'of matmul (CPU time)',
];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] as number)).join('  ');
console.log(line(header));
for (const row of rows) console.log(line(row));
console.log(
  `One optimiser step = ${sequencesPerStep} sequences of ${positions} tokens (last ${trainedPerSequence} trained); ` +
    'grpo: CISPO in micro-batches of 4 sequences; sft: one micro-batch; LoRA on all 7 projections; matmul FLOPs the step needs.',
);
console.log(
  '"worker ms": the slowest worker\'s own compute per step (adapter load, forward, backward, gradient ' +
    'read-back); the rest of ms/step is the coordinator (sharding, summing, clip, AdamW) and messaging. ' +
    '"cores": CPU time / wall time, the cores the step got; "of matmul": of one thread\'s matmul rate, so N ' +
    `workers can reach N × 100 %. ${availableParallelism()} core(s) here; load average at the end ` +
    `${loadavg()[0]?.toFixed(2)} (other load takes cores from the workers).`,
);
console.log(
  'matmul GFLOP/s: the 1024² product re-timed beside each step. CPU time is this process’s (user + system): on a ' +
    'loaded machine its ratio to the matmul’s CPU time is the steadier figure (a GPU backend’s work is not in it).',
);
for (const text of profiles) console.log(text);
