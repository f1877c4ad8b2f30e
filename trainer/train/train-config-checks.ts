// The train config's cross-field checks, each message saying how to fix the combination. They run
// even when a field failed (so every problem is reported at once), hence the type guards.
import type { z } from 'zod';

interface Partial {
  readonly mode?: unknown;
  readonly continuous?: unknown;
  readonly publish?: { readonly makeDefault?: unknown; readonly abTestWeight?: unknown };
  readonly reward?: unknown;
  readonly rewardWeights?: { readonly judge?: unknown; readonly verifier?: unknown };
  readonly maxSequenceTokens?: unknown;
  readonly loss?: { readonly microBatchTokens?: unknown };
  readonly engine?: { readonly processes?: unknown; readonly sharding?: unknown };
  readonly storeWait?: { readonly retrySeconds?: unknown; readonly retryCapSeconds?: unknown };
}

export function trainConfigChecks(config: Partial, context: z.RefinementCtx): void {
  const fail = (message: string) => context.addIssue({ code: 'custom', path: [], message });
  const { abTestWeight, makeDefault } = config.publish ?? {};
  if (typeof abTestWeight === 'number' && makeDefault === true) {
    fail('--ab-test lets the experiment decide which version serves: add --no-default (or drop --ab-test)');
  }
  if (
    config.reward === 'ruler+verifier' &&
    config.rewardWeights?.judge === 0 &&
    config.rewardWeights.verifier === 0
  ) {
    fail('with --reward ruler+verifier at least one of the judge and verifier weights must be non-zero');
  }
  if (config.continuous === true && config.mode === 'sft') {
    fail('--continuous trains GRPO while rollouts run; --sft is a one-off warm-up: drop one of them');
  }
  const { retrySeconds, retryCapSeconds } = config.storeWait ?? {};
  if (
    typeof retrySeconds === 'number' &&
    typeof retryCapSeconds === 'number' &&
    retryCapSeconds < retrySeconds
  ) {
    fail(
      '--store-retry-cap-seconds is the longest wait between store retries: make it at least --store-retry-seconds',
    );
  }
  const engine = config.engine;
  if (engine?.sharding === 'fsdp' && typeof engine.processes === 'number' && engine.processes < 2) {
    fail(
      '--engine-sharding fsdp shards the model over several engine processes: add --engine-processes N (N >= 2, one per GPU), or drop --engine-sharding',
    );
  }
  const maxTokens = config.maxSequenceTokens;
  const microBatch = config.loss?.microBatchTokens;
  if (typeof maxTokens === 'number' && typeof microBatch === 'number' && maxTokens > microBatch) {
    fail(
      `--max-sequence-tokens (${maxTokens}) exceeds --micro-batch-tokens (${microBatch}): a sequence must fit in one micro-batch; raise --micro-batch-tokens`,
    );
  }
}
