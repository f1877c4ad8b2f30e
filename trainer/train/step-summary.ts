// The step record: trainer/grpo's stepMetrics (loss, reward, advantage, clip, KL, gradient) plus what
// only the trainer job knows (throughput, tokenization drift, sequences left out), and the one-line
// summary printed per step. Pure. Keys use `/` (conventions §17).
import type { LossSums } from '../grpo/grpo-loss.ts';
import { type GroupRecord, stepMetrics } from '../grpo/step-metrics.ts';
import type { BuiltBatch } from './build-batch.ts';
import type { EngineStepResult } from '../engine/train-engine.ts';

export interface StepSummaryInput {
  readonly groups: readonly GroupRecord[];
  readonly batch: BuiltBatch;
  readonly result: EngineStepResult;
  readonly maxGradNorm: number;
  readonly learningRate: number;
}

/** How off-policy the step's data was (GRPO only): see `offPolicyMetrics`. */
export interface StepStaleness {
  /** Versions behind the head of each trajectory, by id (those in the batch are counted). */
  readonly perTrajectory: Readonly<Record<string, number>>;
  /** Groups skipped while gathering this step for being beyond --max-off-policy-steps. */
  readonly staleGroups: number;
}

/** Every value is a finite number (the store's metrics column refuses anything else). */
export function stepRecordMetrics(
  input: StepSummaryInput & { readonly staleness?: StepStaleness },
): Record<string, number> {
  const { batch, result } = input;
  const base = stepMetrics({
    groups: input.groups,
    microBatches: result.microBatches,
    gradNorm: result.gradNorm,
    maxGradNorm: input.maxGradNorm,
    learningRate: input.learningRate,
  });
  return finite({
    ...base,
    ...throughput(result, base.tokens),
    ...tokenReport(batch),
    ...(input.staleness ? offPolicyMetrics(batch, input.staleness) : {}),
    ...(result.replay
      ? {
          'replay/sequences': result.replay.sequences,
          // Its micro-batches share one normaliser, so their losses sum to the token mean.
          'replay/loss': result.replay.microBatches.reduce((sum, b) => sum + b.loss, 0),
        }
      : {}),
  });
}

/**
 * `staleness/mean` and `staleness/max`: versions behind the head of the step's trained trajectories
 * (each once, like the rewards); `groups/stale`: groups skipped while gathering the step.
 */
export function offPolicyMetrics(batch: BuiltBatch, staleness: StepStaleness): Record<string, number> {
  const behind = batch.sequences.map((sequence) => staleness.perTrajectory[sequence.trajectoryId] ?? 0);
  return {
    'staleness/mean': behind.length > 0 ? behind.reduce((a, b) => a + b, 0) / behind.length : 0,
    'staleness/max': Math.max(0, ...behind),
    'groups/stale': staleness.staleGroups,
  };
}

/** SFT has no rewards or advantages: loss, tokens, gradient, throughput, drift. */
export function sftRecordMetrics(
  input: Omit<StepSummaryInput, 'groups'> & { readonly epoch: number },
): Record<string, number> {
  const { batch, result } = input;
  const total = (key: keyof LossSums) => result.microBatches.reduce((sum, b) => sum + (b[key] ?? 0), 0);
  const tokens = total('tokens');
  return finite({
    loss: total('loss'),
    tokens,
    sequences: total('sequences'),
    micro_batches: result.microBatches.length,
    'grad/norm': result.gradNorm,
    'grad/clipped': result.gradNorm > input.maxGradNorm ? 1 : 0,
    lr: input.learningRate,
    epoch: input.epoch,
    ...throughput(result, tokens),
    ...tokenReport(batch),
  });
}

function throughput(result: EngineStepResult, trainedTokens: number): Record<string, number> {
  const seconds = Math.max(result.seconds, 1e-9);
  return {
    'tokens/processed': result.tokens,
    'tokens/padded': result.paddedTokens,
    'tokens/per_second': result.tokens / seconds,
    'tokens/trained_per_second': trainedTokens / seconds,
    'time/step_seconds': result.seconds,
    // With data-parallel workers: how many, and the slowest one's own compute time.
    ...(result.workerSeconds
      ? { workers: result.workerSeconds.length, 'time/worker_seconds_max': Math.max(...result.workerSeconds) }
      : {}),
  };
}

function tokenReport(batch: BuiltBatch): Record<string, number> {
  const sum = (key: 'driftTurns' | 'driftTokens' | 'retokenizedTurns' | 'onPolicyTokens' | 'sampledTurns') =>
    batch.reports.reduce((total, report) => total + report[key], 0);
  return {
    'drift/trajectories': batch.reports.filter((report) => report.driftTurns > 0).length,
    'drift/turns': sum('driftTurns'),
    'drift/tokens': sum('driftTokens'),
    'turns/sampled': sum('sampledTurns'),
    'turns/retokenized': sum('retokenizedTurns'),
    'tokens/on_policy': sum('onPolicyTokens'),
    'sequences/skipped': batch.skipped.length,
  };
}

function finite(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(metrics).map(([key, value]) => [key, Number.isFinite(value) ? value : 0]),
  );
}

/** `step 4 · loss −0.0123 · reward 0.50±0.50 · clip 1.2% · grad 0.83 · 1,234 tok/s · 12 seq`. */
export function formatStepLine(step: number, metrics: Record<string, number>): string {
  const parts = [`step ${step}`, `loss ${fixed(metrics.loss, 4)}`];
  if (metrics['reward/mean'] !== undefined) {
    parts.push(`reward ${fixed(metrics['reward/mean'], 2)}±${fixed(metrics['reward/std'], 2)}`);
  }
  if (metrics['clip/fraction'] !== undefined)
    parts.push(`clip ${fixed(100 * (metrics['clip/fraction'] ?? 0), 1)}%`);
  if (metrics['kl/mean'] !== undefined) parts.push(`kl ${fixed(metrics['kl/mean'], 4)}`);
  if (metrics['staleness/max']) parts.push(`stale ≤ ${metrics['staleness/max']}`);
  if (metrics['is/weight_mean'] !== undefined) {
    parts.push(
      `is ${fixed(metrics['is/weight_mean'], 2)} (${fixed(100 * (metrics['is/truncated_fraction'] ?? 0), 1)}% at cap)`,
    );
  }
  if (metrics['replay/sequences'])
    parts.push(`replay ${metrics['replay/sequences']} × nll ${fixed(metrics['replay/loss'], 3)}`);
  parts.push(`grad ${fixed(metrics['grad/norm'], 3)}`);
  parts.push(`${Math.round(metrics['tokens/per_second'] ?? 0).toLocaleString('en-US')} tok/s`);
  parts.push(`${metrics.sequences ?? 0} seq`);
  if (metrics['groups/no_signal']) parts.push(`${metrics['groups/no_signal']} group(s) without signal`);
  if (metrics['groups/stale']) parts.push(`${metrics['groups/stale']} stale group(s) skipped`);
  if (metrics['drift/turns']) parts.push(`drift ${metrics['drift/turns']} turn(s)`);
  return parts.join(' · ');
}

function fixed(value: number | undefined, digits: number): string {
  return (value ?? 0).toFixed(digits);
}
