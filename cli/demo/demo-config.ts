// The demo's one typed config: sizes of every phase, sampling, learning rates, where its files go,
// and the `--quick` preset the tests use. Defaults are written once below, each with its meaning and
// where it comes from; `demoConfigIssues` checks them with messages that say how to fix a value.
// Leaves out parsing flags (cli/commands/demo.ts) and running anything.
import { join } from 'node:path';
import type { ModelPreset } from '../../model/init-model.ts';
import { ConfigError } from '../../protocol/config-error.ts';
import { type LoraInitA, loraInitAs } from '../../model/lora.ts';

export interface DemoConfig {
  /** Seeds the model's weights, the LoRA init, task sampling and every episode's sampling. */
  readonly seed: number;
  /** TensorFlow.js backend (EDGERL_BACKEND); undefined: the first available. */
  readonly backend?: string;
  /** Model size (`edgerl model init --preset`). */
  readonly preset: ModelPreset;
  /** Std of the random token embedding (tied lm_head) of the demo's model. */
  readonly embeddingStd: number;
  /** LoRA rank on all seven projections; alpha is 2·rank. */
  readonly loraRank: number;
  /** How the adapter's A starts, and whether it trains (false: LoRA-FA, B alone). */
  readonly loraInitA: LoraInitA;
  readonly loraTrainA: boolean;
  /** Scripted-solver demonstrations for the warm start (distinct training tasks). */
  readonly sftDemonstrations: number;
  /** How often the scripted solver gives up at once (answers `?`) instead of looking up (0: never). */
  readonly demonstrationGiveUpRate: number;
  /** Passes over the demonstrations. */
  readonly sftEpochs: number;
  /** Sequences per SFT optimiser step. */
  readonly sftBatch: number;
  readonly sftLearningRate: number;
  /** RL rounds: each rolls out `groupsPerRound` groups, then one trainer cycle publishes a version. */
  readonly rounds: number;
  readonly groupsPerRound: number;
  /** Episodes per group (GRPO's G). */
  readonly groupSize: number;
  readonly rlLearningRate: number;
  /** Held-out eval episodes per A/B arm (one episode per eval task). */
  readonly evalPerArm: number;
  /** Sampling temperature of every rollout, training and eval alike. */
  readonly temperature: number;
  /** Completion tokens per assistant turn. */
  readonly maxTokensPerTurn: number;
  /** Episodes running at once in the edge's queue. */
  readonly concurrency: number;
  /** Ports of the inference endpoint and the edge; 0 picks free ones. */
  readonly inferencePort: number;
  readonly edgePort: number;
  /** Everything the demo writes: model, store, checkpoints, adapters, report. */
  readonly dataDir: string;
  /** Delete `dataDir` first instead of reusing what a previous run left. */
  readonly fresh: boolean;
  /** Print the summary as JSON on stdout (progress still goes to stderr). */
  readonly json: boolean;
  /** The test-sized run: proves the loop, not the learning. */
  readonly quick: boolean;
}

/**
 * Sizes for a 2-core CPU, after the learning probe (research notes): a 2-layer width-64 model went
 * 34% → 75% sampled success in 40 GRPO steps of 16 tasks × 8 episodes; chat-format episodes here are
 * ~200–300 tokens (about 60 of them the assistant's; ~10× the probe's), so groups and rounds are
 * trimmed. Not enough yet: see the README's demo status.
 */
export const demoDefaults = {
  seed: 1,
  /** The tiny preset (2 layers, width 64): the probe's size, and the only one fast enough on 2 cores. */
  preset: 'tiny',
  /**
   * The base stays frozen (only the LoRA adapter trains), and a logit is at most √D·|e| = D·std
   * (the final RMSNorm output has norm √D): transformers' 0.02 caps logits near 1.3 at D = 64, and
   * the warm start's per-token loss stalled near chance (6.28 → 5.5). 0.2 allows logits near 13;
   * measured: loss 6.7 → 1.0 in 40 steps of 4 demonstrations, where 0.02 reached 5.4 in 20 of 8.
   */
  embeddingStd: 0.2,
  /**
   * Rank = hidden size (64 on tiny): every projection can take a full-rank update, the nearest a
   * LoRA gets to training the random base's weights. alpha = 2·r (scale 2), a common LoRA choice.
   */
  loraRank: 64,
  /**
   * Orthogonal A, frozen: training B is then full fine-tuning of each projection in a rotated basis.
   * Measured in a PyTorch replica of the warm start (same model, tokens and optimiser), key-copy
   * accuracy: with PEFT's kaiming-uniform A, trained, at lr 1e-3 it stayed at chance until step 250
   * and reached 97% by step 400 in one seed, 63% by step 500 in another; at 5e-4 it was still at chance
   * at step 400, at 3e-3 (RoPE θ 1e4) at step 200; with orthogonal A, trained, at chance at step 200;
   * with orthogonal A frozen, 86% at step 150 and 100% at 200, as fast as training every weight.
   */
  loraInitA: 'orthogonal',
  loraTrainA: false,
  /**
   * 6,400 × 1 / 8 = 800 steps, ~280 s on 2 cores. Copying keys and values from tool results into
   * the next message is a phase change (the loss sits near 0.25 per token, then drops), and its step
   * varies with the seed: at 600 steps seed 1 learned both copies and seed 2 only the keys (2% → 5%
   * after RL); at 800 both seeds learned them (see the README's demo status).
   */
  sftDemonstrations: 6400,
  /**
   * The start should speak the format but not solve reliably (the issue): imitating a demonstrator
   * that gives up at once on half the tasks gives that, and leaves every other demonstration whole.
   */
  demonstrationGiveUpRate: 0.5,
  sftEpochs: 1,
  sftBatch: 8,
  /** With A frozen and orthogonal this is full fine-tuning's rate for B (the replica's 3e-3 run). */
  sftLearningRate: 3e-3,
  /** Measured: see the README's demo status (16 rounds, ~110 s of RL on 2 cores). */
  rounds: 16,
  /** Half the probe's 16 tasks per step: 64 episodes of ~100–160 tokens a round on 2 cores. */
  groupsPerRound: 8,
  /** Episodes per task, the probe's 8. */
  groupSize: 8,
  /** The probe's AdamW rate (LoRA-FA with orthogonal A moves W as full fine-tuning would). */
  rlLearningRate: 1e-3,
  /** ≈ 100 per arm gives p < 0.05 for a 20-point gain around 30–50% (two-proportion z-test power ≈ 0.8). */
  evalPerArm: 100,
  /** Served with sampling, so evaluated with sampling (the probe's honest evaluation). 0.7 rather
   *  than 1: the warm-started tiny model's long tail breaks calls mid-JSON at 1 (measured, same
   *  warm start and seed: 51 of 100 start-arm episodes ended in malformed output at 1, 11 at 0.7). */
  temperature: 0.7,
  /** A lookup call is 27 tokens with its end-of-turn token in the tiny tokenizer; a few spare. */
  maxTokensPerTurn: 32,
  concurrency: 16,
  inferencePort: 0,
  edgePort: 0,
  dataDir: join('.edgerl', 'demo'),
  fresh: false,
  json: false,
  quick: false,
} as const satisfies DemoConfig;

/** `--quick`: every phase once, tiny sizes (a minute or two on 2 cores). */
export const quickOverrides = {
  sftDemonstrations: 8,
  sftEpochs: 1,
  sftBatch: 8,
  rounds: 1,
  groupsPerRound: 2,
  groupSize: 2,
  evalPerArm: 3,
  concurrency: 4,
} as const satisfies Partial<DemoConfig>;

/** Bad settings, every problem listed with the flag to fix. */
export class DemoConfigError extends ConfigError {
  override readonly name = 'DemoConfigError';
  readonly code = 'invalid-demo-config';
  constructor(issues: readonly string[]) {
    super(issues, 'demo configuration:\n  ', '\n  ');
  }
}

export function resolveDemoConfig(input: Partial<DemoConfig>): DemoConfig {
  const base: DemoConfig = { ...demoDefaults, ...(input.quick ? quickOverrides : {}) };
  const config: DemoConfig = { ...base, ...definedOnly(input) };
  const issues = demoConfigIssues(config);
  if (issues.length > 0) throw new DemoConfigError(issues);
  return config;
}

export function demoConfigIssues(config: DemoConfig): string[] {
  const issues: string[] = [];
  const int = (flag: string, value: number, min: number, max: number) => {
    if (!(Number.isInteger(value) && value >= min && value <= max))
      issues.push(`--${flag} must be an integer between ${min} and ${max}, got ${value}`);
  };
  int('seed', config.seed, 0, 2 ** 31 - 1);
  int('lora-rank', config.loraRank, 1, 4096);
  if (!loraInitAs.includes(config.loraInitA))
    issues.push(`--lora-init-a must be one of ${loraInitAs.join(', ')}, got ${String(config.loraInitA)}`);
  if (!(config.embeddingStd > 0 && config.embeddingStd <= 10))
    issues.push(`--embedding-std must be in (0, 10], got ${config.embeddingStd}`);
  int('sft-demos', config.sftDemonstrations, 1, 100_000);
  int('sft-epochs', config.sftEpochs, 1, 1000);
  int('sft-batch', config.sftBatch, 1, 1024);
  int('rounds', config.rounds, 1, 10_000);
  int('groups', config.groupsPerRound, 1, 1024);
  // A group of one has no spread, hence no GRPO advantage.
  int('group-size', config.groupSize, 2, 256);
  int('eval-per-arm', config.evalPerArm, 2, 100_000);
  int('max-tokens', config.maxTokensPerTurn, 1, 32_768);
  int('concurrency', config.concurrency, 1, 1024);
  int('inference-port', config.inferencePort, 0, 65_535);
  int('edge-port', config.edgePort, 0, 65_535);
  if (!(config.demonstrationGiveUpRate >= 0 && config.demonstrationGiveUpRate < 1))
    issues.push(`--give-up-rate must be in [0, 1), got ${config.demonstrationGiveUpRate}`);
  if (!(config.temperature > 0 && config.temperature <= 2))
    issues.push(`--temperature must be in (0, 2] (the demo samples), got ${config.temperature}`);
  for (const [flag, value] of [
    ['sft-lr', config.sftLearningRate],
    ['lr', config.rlLearningRate],
  ] as const) {
    if (!(value > 0 && value < 1)) issues.push(`--${flag} must be in (0, 1), got ${value}`);
  }
  if (config.dataDir.trim() === '') issues.push('--data-dir must name a directory');
  return issues;
}

/** Where each piece lives under the data directory. */
export function demoPaths(dataDir: string) {
  return {
    dataDir,
    model: join(dataDir, 'model'),
    store: join(dataDir, 'pgdata'),
    train: join(dataDir, 'train'),
    adapters: join(dataDir, 'train', 'adapters'),
    demonstrations: join(dataDir, 'demonstrations.jsonl'),
    report: join(dataDir, 'report.html'),
    summary: join(dataDir, 'summary.json'),
  };
}
export type DemoPaths = ReturnType<typeof demoPaths>;

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
