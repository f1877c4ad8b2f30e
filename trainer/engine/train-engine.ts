// What the training cycle needs from a tensor engine, as one interface: the base model loaded, one
// adapter to train (created from the LoRA settings or loaded from a PEFT directory) with its AdamW
// state, one optimiser step over a batch for an objective, log-probs and next-token predictions of
// sequences, and saving the adapter (PEFT files) with its optimiser state (a checkpoint). The cycle
// (trainer/train/) drives any engine alike; tfjs/ runs in this process, torch/ in a Python child.
// Leaves out scheduling, the store and publication: those are the cycle's, whatever the engine.
import type { LoraConfig } from '../../model/lora.ts';
import type { LossSums } from '../grpo/grpo-loss.ts';
import type { Objective } from '../grpo/objective-loss.ts';
import type { TrainingSequence } from './training-sequence.ts';

export const engineKinds = ['tfjs', 'torch'] as const;
/** tfjs: TensorFlow.js in this process (embedded, small models); torch: PyTorch + transformers + PEFT in a child process. */
export type EngineKind = (typeof engineKinds)[number];

/** What the cycle reads of the base model. */
export interface EngineModel {
  readonly vocabSize: number;
  readonly maxPositionEmbeddings: number;
  /** Base-model parameters (embeddings included). */
  readonly parameters: number;
}

/** A new adapter's shape and start, as PEFT's LoraConfig has them (edgerl's LoRA settings). */
export type AdapterSettings = Pick<LoraConfig, 'r' | 'alpha' | 'dropout' | 'targets' | 'useRslora' | 'initA'>;

/** Where the trained adapter starts: fresh from the settings (B = 0), or a PEFT adapter directory. */
export type AdapterStart =
  | { readonly kind: 'fresh'; readonly settings: AdapterSettings; readonly seed: number }
  | { readonly kind: 'peft'; readonly dir: string };

/** The shape of the adapter an engine holds (a loaded one keeps its own). */
export type AdapterShape = Pick<LoraConfig, 'r' | 'alpha' | 'targets'>;

/** AdamW's settings (trainer/grpo/adamw.ts; torch.optim.AdamW is the same update) and which matrices train. */
export interface OptimizerSettings {
  readonly learningRate: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  /** false: LoRA-FA, A frozen as created or loaded, B alone trains. */
  readonly trainA: boolean;
}

/** One optimiser step: the sequences, what they are trained for, and how. */
export interface EngineStep {
  readonly sequences: readonly TrainingSequence[];
  readonly objective: Objective;
  /** Padded tokens per micro-batch (sequences × longest): one forward and backward each. */
  readonly microBatchTokens: number;
  /** Global gradient-norm clip; Infinity measures without clipping. */
  readonly maxGradNorm: number;
  readonly learningRate: number;
  /** Filler id for right padding (masked out of attention and loss). */
  readonly padTokenId: number;
  /** Sequences trained with next-token loss beside a GRPO step (trainer/train/replay.ts), their
   *  token-mean loss times `weight` added to the step's. */
  readonly replay?: { readonly sequences: readonly TrainingSequence[]; readonly weight: number };
}

export interface EngineStepResult {
  /** One entry per micro-batch: its loss and the sums the step record is built from. */
  readonly microBatches: LossSums[];
  /** Global gradient norm before clipping. */
  readonly gradNorm: number;
  /** Real (unpadded) tokens of every sequence, prompt included: what the forward pass processed. */
  readonly tokens: number;
  readonly paddedTokens: number;
  readonly seconds: number;
  /** With data-parallel workers: each one's compute time in the step. */
  readonly workerSeconds?: readonly number[];
  /** With `replay`: its micro-batches' sums (its loss before the weight) and its sequence count. */
  readonly replay?: { readonly microBatches: LossSums[]; readonly sequences: number };
}

/** Progress of a step: micro-batches `done` of `total`, real tokens processed so far. */
export type MicroBatchProgress = (done: number, total: number, tokens: number) => void;

/** Positions to predict at: row `rows[k]` of the sequences, after its token `positions[k]`. */
export interface PredictQuery {
  readonly rows: readonly number[];
  readonly positions: readonly number[];
  /** Tokens whose log-probability to return at each position. */
  readonly tokens?: readonly number[];
}

export interface Prediction {
  /** The most likely next token at each queried position. */
  readonly argmax: number[];
  /** log p(tokens[k]) at each queried position, when tokens were given. */
  readonly logprobs?: number[];
}

export interface TrainEngine {
  readonly kind: EngineKind;
  readonly model: EngineModel;
  /** Replaces the trained adapter; the optimiser must be reset after. */
  startAdapter(start: AdapterStart): Promise<AdapterShape>;
  /** Fresh AdamW moments over the adapter's trainable matrices. */
  resetOptimizer(settings: OptimizerSettings): Promise<void>;
  /** The moments and step count from a checkpoint directory's optimizer.safetensors (either engine's). */
  loadOptimizer(dir: string): Promise<void>;
  /** Optimiser steps the moments have taken (the learning-rate schedule counts these). */
  readonly optimizerSteps: number;
  /** One optimiser step; the adapter and moments change only when it resolves. */
  step(step: EngineStep, onMicroBatch?: MicroBatchProgress): Promise<EngineStepResult>;
  /** Writes the adapter as a PEFT directory into `dir` (created), and with `optimizer` its moments. */
  save(dir: string, options: { readonly optimizer: boolean }): Promise<void>;
  /** Per sequence, log p(token t + 1 | ≤ t) for t < length − 1; with the adapter or the base model alone. */
  logprobs(
    sequences: readonly (readonly number[])[],
    options: { readonly adapter: boolean },
  ): Promise<number[][]>;
  /** Teacher-forced next-token predictions at chosen positions. */
  predict(
    sequences: readonly (readonly number[])[],
    query: PredictQuery,
    options: { readonly adapter: boolean; readonly padTokenId: number },
  ): Promise<Prediction>;
  /** Frees the model (and stops a child process); once. */
  close(): Promise<void>;
}

/** Every trained target has a sampling log-prob or is flagged on-policy (build-batch.ts decides which). */
export function checkOnPolicy(sequences: readonly TrainingSequence[]): void {
  for (const sequence of sequences) {
    sequence.targetMask.forEach((bit, at) => {
      if (bit === 1 && sequence.onPolicy[at] !== 1 && !Number.isFinite(sequence.oldLogprobs[at])) {
        throw new RangeError(
          `trainStep: trajectory ${sequence.trajectoryId}, target ${at} is trained with neither a finite sampling logprob nor the on-policy flag`,
        );
      }
    });
  }
}
