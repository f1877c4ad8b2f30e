// One optimiser step on the adapter: the step's sequences split into micro-batches (bounded padded
// tokens), each micro-batch's loss differentiated with respect to the adapter's variables only, the
// gradients summed (each micro-batch is divided by the whole step's normaliser, so the sum is the full
// batch's gradient), clipped by global norm, and applied with AdamW. The gradients of a set of
// sequences (`sequenceGradients`) are the seam data-parallel workers use: each computes its share's,
// this thread sums, clips and applies (trainer/train/workers/). Objectives are a closed union:
// GRPO (trainer/grpo's loss table: PPO-clip or CISPO, token- or sequence-mean, optional k3 KL) and SFT
// (next-token negative log-likelihood on assistant tokens, token-mean). Leaves out scheduling, I/O and
// metrics beyond the read-back sums.
//
// Legend: B = sequences in a micro-batch, T = its longest sequence, T − 1 = predicted positions.
import * as tf from '@tensorflow/tfjs';
import type { AdamW } from '../../grpo/adamw.ts';
import { type StepNormaliser, stepNormaliser } from '../../grpo/aggregate.ts';
import { clipGradNorm } from '../../grpo/clip-grad-norm.ts';
import { type LossSums, readLossSums } from '../../grpo/grpo-loss.ts';
import { addGrads, microBatchGrads } from '../../grpo/micro-batch-grads.ts';
import { planMicroBatches } from '../../grpo/micro-batches.ts';
import {
  type Objective,
  type ObjectiveBatch,
  objectiveBeta,
  objectiveLoss,
} from '../../grpo/objective-loss.ts';
import type { PolicyModel } from '../../../model/policy-model.ts';
import { checkOnPolicy, type EngineStepResult, type MicroBatchProgress } from '../train-engine.ts';
import type { TrainingSequence } from '../training-sequence.ts';

export interface TrainStepOptions extends GradientOptions {
  /** Global gradient-norm clip; Infinity measures without clipping. */
  readonly maxGradNorm: number;
  readonly learningRate: number;
  /** Called after each micro-batch, e.g. for a progress bar. */
  readonly onMicroBatch?: MicroBatchProgress;
  /** Where the gradients are computed; undefined: in this thread. */
  readonly workers?: GradientWorkers;
  /** Sequences trained with next-token loss beside a GRPO step (replay.ts), their token-mean loss
   *  times `weight` added to the step's. */
  readonly replay?: { readonly sequences: readonly TrainingSequence[]; readonly weight: number };
}

interface MicroBatchTensors extends ObjectiveBatch {
  readonly ids: tf.Tensor2D; // [B, T] int32
  readonly attentionMask: number[][]; // B rows of T flags
  /** The mask on the host: the forward pass computes logprobs only where it is set. */
  readonly targetMask: Float32Array[]; // B rows of T−1 flags
}

/** Pads the chosen sequences on the right to the longest and lays them out as tensors. */
function microBatchTensors(sequences: readonly TrainingSequence[], padTokenId: number): MicroBatchTensors {
  const b = sequences.length;
  const t = Math.max(2, ...sequences.map((sequence) => sequence.ids.length));
  const ids = new Int32Array(b * t).fill(padTokenId);
  const mask = new Float32Array(b * (t - 1));
  const weighted = sequences.some((sequence) => sequence.lossWeights)
    ? new Float32Array(b * (t - 1))
    : undefined;
  const old = new Float32Array(b * (t - 1));
  const onPolicy = new Uint8Array(b * (t - 1));
  const attentionMask: number[][] = [];
  sequences.forEach((sequence, row) => {
    ids.set(sequence.ids, row * t);
    attentionMask.push(Array.from({ length: t }, (_, at) => (at < sequence.ids.length ? 1 : 0)));
    const offset = row * (t - 1);
    sequence.targetMask.forEach((bit, at) => {
      mask[offset + at] = bit;
      if (weighted) weighted[offset + at] = bit * (sequence.lossWeights?.[at] ?? 1);
      const logprob = sequence.oldLogprobs[at] as number;
      // Which trained tokens are on-policy is buildBatch's decision (checkOnPolicy); context NaNs stay
      // out (mask 0, old 0).
      old[offset + at] = Number.isFinite(logprob) ? logprob : 0;
      onPolicy[offset + at] = bit === 1 && sequence.onPolicy[at] === 1 ? 1 : 0;
    });
  });
  const maskTensor = tf.tensor2d(mask, [b, t - 1]);
  return {
    ids: tf.tensor2d(ids, [b, t], 'int32'),
    attentionMask,
    mask: maskTensor,
    weightedMask: weighted ? tf.tensor2d(weighted, [b, t - 1]) : maskTensor,
    targetMask: sequences.map((_, row) => mask.subarray(row * (t - 1), (row + 1) * (t - 1))),
    oldLogprobs: tf.tensor2d(old, [b, t - 1]),
    onPolicy: tf.tensor2d(onPolicy, [b, t - 1], 'bool'),
    advantages: tf.tensor1d(sequences.map((sequence) => sequence.advantage)),
  };
}

/** What computing a set of sequences' gradients needs besides the model: the objective and the layout. */
export interface GradientOptions {
  readonly objective: Objective;
  /** Padded tokens per micro-batch (sequences × longest). */
  readonly microBatchTokens: number;
  /** Filler id for right padding (masked out of attention and loss). */
  readonly padTokenId: number;
}

/** The summed gradients of some sequences (the whole step's, or one worker's share of it). */
export interface SequenceGradients {
  /** One per trainable variable of the adapter, in `model.trainableVariables(adapter)` order. */
  readonly grads: tf.Tensor[];
  /** One entry per micro-batch, as read back by readLossSums. */
  readonly microBatches: LossSums[];
  readonly tokens: number;
  readonly paddedTokens: number;
}

/**
 * Computes the step's gradients somewhere else (worker threads, trainer/train/workers/): the same
 * sum `sequenceGradients` gives, for the coordinator to clip and apply. `seconds` is each worker's
 * own compute time, for reports.
 */
export interface GradientWorkers {
  readonly size: number;
  gradients(
    model: PolicyModel,
    adapterName: string,
    sequences: readonly TrainingSequence[],
    normaliser: StepNormaliser,
    options: GradientOptions,
    onMicroBatch?: MicroBatchProgress,
  ): Promise<SequenceGradients & { readonly workerSeconds: readonly number[] }>;
}

/**
 * Gradients of `sequences`' loss with respect to the adapter's trainable variables, summed over
 * micro-batches of at most `microBatchTokens` padded tokens; each micro-batch is divided by the
 * step's `normaliser`, so sums over disjoint shares of a step add up to the step's gradient. The
 * caller owns (disposes) the returned gradients; nothing else is left behind.
 */
export async function sequenceGradients(
  model: PolicyModel,
  adapterName: string,
  sequences: readonly TrainingSequence[],
  normaliser: StepNormaliser,
  options: GradientOptions,
  onMicroBatch?: MicroBatchProgress,
): Promise<SequenceGradients> {
  if (sequences.length === 0) throw new RangeError('sequenceGradients: no sequences');
  const variables = model.trainableVariables(adapterName);
  const plan = planMicroBatches(
    sequences.map((sequence) => sequence.ids.length),
    options.microBatchTokens,
  );
  const lossOf = objectiveLoss(options.objective);
  const beta = objectiveBeta(options.objective);
  const microBatches: LossSums[] = [];
  let grads: tf.Tensor[] | undefined;
  let tokens = 0;
  let paddedTokens = 0;
  try {
    for (const [index, members] of plan.batches.entries()) {
      const chosen = members.map((member) => sequences[member] as TrainingSequence);
      const base = microBatchTensors(chosen, options.padTokenId);
      const forward = {
        adapter: adapterName,
        attentionMask: base.attentionMask,
        targetMask: base.targetMask,
        training: true,
      };
      // The reference (adapter off) needs no gradient: computed outside the tape, only when beta > 0.
      const batch: MicroBatchTensors =
        beta > 0
          ? {
              ...base,
              refLogprobs: model.forwardLogprobs(base.ids, {
                adapter: null,
                attentionMask: base.attentionMask,
                targetMask: base.targetMask,
              }),
            }
          : base;
      try {
        const result = microBatchGrads(variables, () =>
          lossOf(model.forwardLogprobs(batch.ids, forward), batch, normaliser),
        );
        grads = addGrads(grads, result.grads);
        microBatches.push(await readLossSums(result.sums));
      } finally {
        tf.dispose([
          batch.ids,
          batch.mask,
          batch.weightedMask,
          batch.oldLogprobs,
          batch.onPolicy,
          batch.advantages,
        ]);
        if (batch.refLogprobs) batch.refLogprobs.dispose();
      }
      tokens += chosen.reduce((sum, sequence) => sum + sequence.ids.length, 0);
      paddedTokens += chosen.length * (batch.attentionMask[0]?.length ?? 0);
      onMicroBatch?.(index + 1, plan.batches.length, tokens);
    }
  } catch (error) {
    if (grads) tf.dispose(grads);
    throw error;
  }
  return { grads: grads as tf.Tensor[], microBatches, tokens, paddedTokens };
}

/**
 * One optimiser step on `sequences` for adapter `adapterName`: the gradients (here, or on
 * `options.workers`), then clip and AdamW here, so the adapter and its moments live in this process
 * only. Leaves the adapter variables and the optimiser updated and no other tensor behind.
 */
export async function trainStep(
  model: PolicyModel,
  adapterName: string,
  optimizer: AdamW,
  sequences: readonly TrainingSequence[],
  options: TrainStepOptions,
): Promise<EngineStepResult> {
  if (sequences.length === 0) throw new RangeError('trainStep: no sequences to train on');
  checkOnPolicy(sequences);
  const started = performance.now();
  const variables = model.trainableVariables(adapterName);
  if (
    variables.length !== optimizer.variables.length ||
    variables.some((v, i) => v !== optimizer.variables[i])
  ) {
    throw new RangeError(`trainStep: the optimiser does not hold adapter "${adapterName}"'s variables`);
  }
  const computed = await gradientsOf(model, adapterName, sequences, options, options.onMicroBatch);
  let grads = computed.grads;
  let replayed: SequenceGradients | undefined;
  try {
    const replay = options.replay;
    if (replay && replay.sequences.length > 0) {
      // Its own normaliser: the replayed loss is a token mean over its own tokens, whatever the GRPO
      // part's size, so `weight` means the same at any batch size.
      replayed = await gradientsOf(model, adapterName, replay.sequences, {
        ...options,
        objective: { kind: 'sft' },
      });
      const replayGrads = replayed.grads;
      grads = addGrads(
        grads,
        tf.tidy(() => replayGrads.map((grad) => tf.mul(grad, replay.weight))),
      );
    }
    const gradNorm = await clipAndApply(optimizer, grads, options.maxGradNorm, options.learningRate);
    return {
      microBatches: computed.microBatches,
      gradNorm,
      tokens: computed.tokens + (replayed?.tokens ?? 0),
      paddedTokens: computed.paddedTokens + (replayed?.paddedTokens ?? 0),
      seconds: (performance.now() - started) / 1000,
      ...(computed.workerSeconds ? { workerSeconds: computed.workerSeconds } : {}),
      ...(replayed
        ? {
            replay: { microBatches: replayed.microBatches, sequences: options.replay?.sequences.length ?? 0 },
          }
        : {}),
    };
  } finally {
    tf.dispose(grads);
    if (replayed) tf.dispose(replayed.grads);
  }
}

/** The summed gradients of `sequences` under their own step normaliser, on the workers when there are. */
async function gradientsOf(
  model: PolicyModel,
  adapterName: string,
  sequences: readonly TrainingSequence[],
  options: TrainStepOptions,
  onMicroBatch?: MicroBatchProgress,
): Promise<SequenceGradients & { readonly workerSeconds?: readonly number[] }> {
  const normaliser = stepNormaliser(sequences.map((sequence) => sequence.trainedTokens));
  return options.workers
    ? await options.workers.gradients(model, adapterName, sequences, normaliser, options, onMicroBatch)
    : await sequenceGradients(model, adapterName, sequences, normaliser, options, onMicroBatch);
}

/** Clips `grads` by global norm and applies them with AdamW; returns the norm before clipping. */
async function clipAndApply(
  optimizer: AdamW,
  grads: readonly tf.Tensor[],
  maxGradNorm: number,
  learningRate: number,
): Promise<number> {
  const clipped = clipGradNorm(grads, maxGradNorm);
  try {
    const gradNorm = (await clipped.norm.data())[0] as number;
    if (!Number.isFinite(gradNorm)) {
      throw new RangeError(`trainStep: the gradient norm is ${gradNorm}; the step was not applied`);
    }
    optimizer.applyGradients(clipped.grads, learningRate);
    return gradNorm;
  } finally {
    tf.dispose([...clipped.grads, clipped.norm]);
  }
}
