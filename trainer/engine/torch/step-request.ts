// An optimiser step and a batch of sequences as the torch engine's protocol lays them out
// (docs/torch-engine.md, "Operations"): flat tensors end to end, the micro-batch plan and the step's
// normaliser decided here, by the same rules the tfjs engine uses (grpo/micro-batches.ts,
// grpo/aggregate.ts); and the reply's sums back in the trainer's names. Pure.
import { stepNormaliser } from '../../grpo/aggregate.ts';
import type { LossSums } from '../../grpo/grpo-loss.ts';
import { planMicroBatches } from '../../grpo/micro-batches.ts';
import { toProtocolObjective } from '../../grpo/protocol-objective.ts';
import type { EngineStep, EngineStepResult } from '../train-engine.ts';
import type { TrainingSequence } from '../training-sequence.ts';
import type { WireTensor } from './frames.ts';

/** `lengths` and `ids` of token sequences laid end to end. */
export function sequenceTensors(sequences: readonly (readonly number[])[]): Record<string, WireTensor> {
  const lengths = Int32Array.from(sequences, (sequence) => sequence.length);
  const ids = new Int32Array(lengths.reduce((sum, length) => sum + length, 0));
  let at = 0;
  for (const sequence of sequences) {
    ids.set(sequence, at);
    at += sequence.length;
  }
  return {
    lengths: { dtype: 'int32', shape: [lengths.length], data: lengths },
    ids: { dtype: 'int32', shape: [ids.length], data: ids },
  };
}

/** Training sequences' tensors; per-target arrays hold Σ(T − 1) entries (the build-batch alignment). */
function trainingTensors(sequences: readonly TrainingSequence[], full: boolean): Record<string, WireTensor> {
  const targets = sequences.reduce((sum, sequence) => sum + sequence.targetMask.length, 0);
  const targetMask = new Uint8Array(targets);
  const oldLogprobs = new Float32Array(targets);
  const onPolicy = new Uint8Array(targets);
  const weighted = sequences.some((sequence) => sequence.lossWeights);
  const lossWeights = weighted ? new Float32Array(targets).fill(1) : undefined;
  let at = 0;
  for (const sequence of sequences) {
    sequence.targetMask.forEach((bit, index) => {
      targetMask[at + index] = bit;
      oldLogprobs[at + index] = sequence.oldLogprobs[index] ?? Number.NaN;
      onPolicy[at + index] = sequence.onPolicy[index] ?? 0;
      if (lossWeights) lossWeights[at + index] = sequence.lossWeights?.[index] ?? 1;
    });
    at += sequence.targetMask.length;
  }
  const shape = [targets];
  return {
    ...sequenceTensors(sequences.map((sequence) => sequence.ids)),
    target_mask: { dtype: 'uint8', shape, data: targetMask },
    ...(full
      ? {
          old_logprobs: { dtype: 'float32', shape, data: oldLogprobs },
          on_policy: { dtype: 'uint8', shape, data: onPolicy },
          advantages: {
            dtype: 'float32',
            shape: [sequences.length],
            data: Float32Array.from(sequences, (sequence) => sequence.advantage),
          },
        }
      : {}),
    ...(lossWeights ? { loss_weights: { dtype: 'float32', shape, data: lossWeights } } : {}),
  };
}

function plan(sequences: readonly TrainingSequence[], microBatchTokens: number) {
  return {
    micro_batches: planMicroBatches(
      sequences.map((sequence) => sequence.ids.length),
      microBatchTokens,
    ).batches,
    normaliser: stepNormaliser(sequences.map((sequence) => sequence.trainedTokens)),
  };
}

/** The `step` request's args and tensors. */
export function stepRequest(step: EngineStep): {
  args: Record<string, unknown>;
  tensors: Record<string, WireTensor>;
} {
  const replay = step.replay && step.replay.sequences.length > 0 ? step.replay : undefined;
  const replayTensors = replay
    ? Object.fromEntries(
        Object.entries(trainingTensors(replay.sequences, false)).map(([name, tensor]) => [
          `replay_${name}`,
          tensor,
        ]),
      )
    : {};
  return {
    args: {
      objective: toProtocolObjective(step.objective),
      ...plan(step.sequences, step.microBatchTokens),
      max_grad_norm: Number.isFinite(step.maxGradNorm) ? step.maxGradNorm : null,
      learning_rate: step.learningRate,
      pad_token_id: step.padTokenId,
      replay: replay ? { weight: replay.weight, ...plan(replay.sequences, step.microBatchTokens) } : null,
    },
    tensors: { ...trainingTensors(step.sequences, true), ...replayTensors },
  };
}

const sumNames = {
  loss: 'loss',
  policy_loss: 'policyLoss',
  kl: 'kl',
  kl_sum: 'klSum',
  tokens: 'tokens',
  sequences: 'sequences',
  ratio_sum: 'ratioSum',
  clipped_low: 'clippedLow',
  clipped_high: 'clippedHigh',
  is_weight_sum: 'isWeightSum',
  is_weight_max: 'isWeightMax',
  is_truncated: 'isTruncated',
  is_ratio_sum: 'isRatioSum',
  is_ratio_max: 'isRatioMax',
} as const satisfies Record<string, keyof LossSums>;

function lossSums(raw: unknown): LossSums[] {
  if (!Array.isArray(raw)) throw new TypeError('the step reply has no micro_batches list');
  return raw.map((entry: Record<string, unknown>) => {
    const sums: Partial<Record<keyof LossSums, number>> = {};
    for (const [wire, name] of Object.entries(sumNames)) {
      const value = entry[wire];
      if (typeof value === 'number') sums[name] = value;
    }
    return sums as LossSums;
  });
}

/** The `step` reply as the cycle reads a step's result. */
export function stepResult(result: Record<string, unknown>, replayed: number): EngineStepResult {
  const replay = result.replay as { micro_batches?: unknown } | null | undefined;
  return {
    microBatches: lossSums(result.micro_batches),
    gradNorm: Number(result.grad_norm),
    tokens: Number(result.tokens),
    paddedTokens: Number(result.padded_tokens),
    seconds: Number(result.seconds),
    ...(replay ? { replay: { microBatches: lossSums(replay.micro_batches), sequences: replayed } } : {}),
  };
}
