// The trainer job's one typed config: which policy and model, where checkpoints and served adapters
// go, the inference endpoint, how groups are scored and batched, the loss (trainer/grpo's LossConfig),
// the LoRA shape, leases, SFT. Every default is written once below with its meaning, unit and source;
// cross-field checks run in `resolveTrainConfig`, with messages that say how to fix the value. Only
// the CLI reads flags and environment variables; it builds the partial input.
import { join } from 'node:path';
import { type LossConfig, LossConfigError, resolveLossConfig } from '../grpo/loss-config.ts';
import { type Projection, projections } from '../../model/hf-config.ts';
import { type LoraInitA, loraInitAs } from '../../model/lora.ts';
import { withoutUndefined as defined } from '../../protocol/without-undefined.ts';

export const rewardModes = ['ruler', 'verifier', 'ruler+verifier'] as const;
/** Where a group's rewards come from: the RULER judge, the environment's verifier, or both mixed. */
export type RewardMode = (typeof rewardModes)[number];

export const trainModes = ['rl', 'sft'] as const;
export type TrainMode = (typeof trainModes)[number];

export const sftRewardFields = ['final', 'verifier'] as const;
export type SftRewardField = (typeof sftRewardFields)[number];

export interface InferenceEndpoint {
  /** OpenAI-compatible base URL up to `/v1` (vLLM `--enable-lora`, or `edgerl serve-model`). */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set. */
  readonly apiKey?: string;
  /** Per request, ms. Default 60 000: loading a large adapter from disk can take tens of seconds. */
  readonly timeoutMs: number;
}

export interface LoraShape {
  /** Rank r. Default 8: PEFT's LoraConfig default. */
  readonly r: number;
  /** Scale numerator (update × alpha / r). Default 8: PEFT's default (scale 1). */
  readonly alpha: number;
  /** Dropout on the adapter input while training. Default 0: PEFT's default. */
  readonly dropout: number;
  /** Adapted projections. Default all seven: ART's default target modules, and QLoRA's finding that
   *  adapting every linear layer is what matches full fine-tuning (arXiv:2305.14314 §4). */
  readonly targets: readonly Projection[];
  readonly useRslora: boolean;
  /** How a new adapter's A starts (LoraInitA). Default kaiming-uniform: PEFT's. */
  readonly initA: LoraInitA;
  /** Train B only (LoRA-FA, arXiv:2308.03303), with A kept as initialised or loaded. Default false. */
  readonly freezeA: boolean;
}

export interface PublishSettings {
  /** Make each published version the policy's default (what requests naming only the policy get).
   *  Default true: the latest trained step serves, as in ART. Off while an A/B test decides. */
  readonly makeDefault: boolean;
  /** Open an A/B experiment of the new version against its parent with this share of traffic (0–1);
   *  null: none. */
  readonly abTestWeight: number | null;
}

export interface SftSettings {
  /** Train on trajectories whose reward is at least this. Default 1: a verifier's "solved". */
  readonly minReward: number;
  /** Which stored reward to compare: the trainer's `final_reward` (default) or `verifier_reward`. */
  readonly rewardField: SftRewardField;
  /** Only this environment's trajectories; undefined: any. */
  readonly env?: string;
  /** Most trajectories read from the store. Default 1000. */
  readonly limit: number;
  /** JSONL of demonstrations, one `{"messages": [...], "tools"?: [...]}` per line, trained on in
   *  addition to (or, with `minReward` unmet, instead of) stored trajectories. */
  readonly demonstrationsFile?: string;
  /** Passes over the data. Default 3: transformers' TrainingArguments.num_train_epochs. */
  readonly epochs: number;
  /** Sequences per optimiser step. Default 8: transformers' per_device_train_batch_size. */
  readonly sequencesPerStep: number;
  /** AdamW learning rate. Default 2e-4: QLoRA's rate for 7B–13B models (arXiv:2305.14314, App. B). */
  readonly learningRate: number;
}

export interface TrainConfig {
  readonly mode: TrainMode;
  /** The policy whose versions are trained (`agent`): adapters are published as `agent@<version>`. */
  readonly policyName: string;
  /** The base model's name on the inference server, used when the policy has to be created.
   *  Default: the model directory's path, which is what vLLM and `edgerl serve-model` call it. */
  readonly baseModelName: string;
  /** Hugging Face model directory (config.json, safetensors, tokenizer files). */
  readonly modelDir: string;
  /** This trainer's own directory: checkpoints/{step}/ and its lock. Default `.edgerl/train/<policy>`. */
  readonly outputDir: string;
  /** Where published adapters are copied for the inference server to read (`<dir>/<policy>@<version>/`).
   *  Default `<outputDir>/adapters`; on another machine, a shared mount the server sees at the same path. */
  readonly servingDir: string;
  /** The serving directory as the inference server sees it, when it runs elsewhere with the directory
   *  mounted at another path. Default: `servingDir` (made absolute). */
  readonly serverAdapterDir?: string;
  /** Committed checkpoints kept; older ones are deleted (published adapters stay in `servingDir`).
   *  Default 3: an edgerl choice, like transformers' save_total_limit. */
  readonly keepCheckpoints: number;
  readonly inference: InferenceEndpoint;
  readonly publish: PublishSettings;
  /** Default 'ruler': RULER ranks every group with an LLM judge (ART's recommended reward). */
  readonly reward: RewardMode;
  /** With 'ruler+verifier': reward = judge·score + verifier·verifierReward. Default 1 and 1. */
  readonly rewardWeights: { readonly judge: number; readonly verifier: number };
  readonly loss: LossConfig;
  readonly lora: LoraShape;
  /** Groups claimed per optimiser step. Default 8: an edgerl choice (with groups of 4–8 episodes, 32–64
   *  episodes a step). */
  readonly groupsPerStep: number;
  /** Optimiser steps per cycle, each on freshly claimed groups; one version is published per cycle.
   *  Default 1: ART's one `train` call per batch of groups. */
  readonly stepsPerCycle: number;
  /** Lease on claimed groups, seconds; renewed every third of it while training. Default 600: the store's. */
  readonly leaseSeconds: number;
  /** The lease owner's name. Stable across restarts of this trainer, so a resumed trainer still holds
   *  its leases (the CLI derives it from the host and the output directory). */
  readonly owner: string;
  /** Seed of LoRA initialisation and dropout. Default 0. */
  readonly seed: number;
  /** Sequences longer than this many tokens are left out (counted in the step record), never cut,
   *  since a cut episode loses its ending, where the reward is earned. Null: the model's context length. */
  readonly maxSequenceTokens: number | null;
  readonly sft: SftSettings;
}

/** Everything optional except what has no sensible default; nested objects may be partial. */
export interface TrainConfigInput {
  readonly mode?: TrainMode;
  readonly policyName: string;
  readonly baseModelName?: string;
  readonly modelDir: string;
  readonly outputDir?: string;
  readonly servingDir?: string;
  readonly serverAdapterDir?: string;
  readonly keepCheckpoints?: number;
  readonly inference: Partial<InferenceEndpoint> & { readonly baseUrl?: string };
  readonly publish?: Partial<PublishSettings>;
  readonly reward?: string;
  readonly rewardWeights?: Partial<TrainConfig['rewardWeights']>;
  readonly loss?: Partial<LossConfig>;
  readonly lora?: Partial<LoraShape>;
  readonly groupsPerStep?: number;
  readonly stepsPerCycle?: number;
  readonly leaseSeconds?: number;
  readonly owner: string;
  readonly seed?: number;
  readonly maxSequenceTokens?: number | null;
  readonly sft?: Partial<SftSettings> & { readonly rewardField?: string };
}

export const trainDefaults = {
  mode: 'rl',
  reward: 'ruler',
  rewardWeights: { judge: 1, verifier: 1 },
  inferenceTimeoutMs: 60_000,
  keepCheckpoints: 3,
  publish: { makeDefault: true, abTestWeight: null },
  lora: {
    r: 8,
    alpha: 8,
    dropout: 0,
    targets: projections,
    useRslora: false,
    initA: 'kaiming-uniform',
    freezeA: false,
  },
  groupsPerStep: 8,
  stepsPerCycle: 1,
  leaseSeconds: 600,
  seed: 0,
  maxSequenceTokens: null,
  sft: {
    minReward: 1,
    rewardField: 'final',
    limit: 1000,
    epochs: 3,
    sequencesPerStep: 8,
    learningRate: 2e-4,
  },
} as const;

/** Bad settings, one message per problem, each naming the field (as its CLI flag where there is one). */
export class TrainConfigError extends Error {
  override readonly name = 'TrainConfigError';
  readonly code = 'invalid_train_config';
  constructor(readonly issues: readonly string[]) {
    super(`invalid trainer config: ${issues.join('; ')}`);
  }
}

/** The default output directory for a policy, relative to the working directory. */
export function defaultOutputDir(policyName: string): string {
  return join('.edgerl', 'train', policyName);
}

export function resolveTrainConfig(input: TrainConfigInput): TrainConfig {
  const issues: string[] = [];
  let loss: LossConfig | undefined;
  try {
    loss = resolveLossConfig(input.loss ?? {});
  } catch (error) {
    if (!(error instanceof LossConfigError)) throw error;
    issues.push(...error.issues.map((issue) => `loss: ${issue}`));
  }
  const outputDir = input.outputDir ?? defaultOutputDir(input.policyName);
  const config = {
    mode: (input.mode ?? trainDefaults.mode) as TrainMode,
    policyName: input.policyName,
    baseModelName: input.baseModelName ?? input.modelDir,
    modelDir: input.modelDir,
    outputDir,
    servingDir: input.servingDir ?? join(outputDir, 'adapters'),
    ...(input.serverAdapterDir ? { serverAdapterDir: input.serverAdapterDir } : {}),
    keepCheckpoints: input.keepCheckpoints ?? trainDefaults.keepCheckpoints,
    inference: {
      baseUrl: (input.inference.baseUrl ?? '').replace(/\/+$/, ''),
      ...(input.inference.apiKey ? { apiKey: input.inference.apiKey } : {}),
      timeoutMs: input.inference.timeoutMs ?? trainDefaults.inferenceTimeoutMs,
    },
    publish: { ...trainDefaults.publish, ...defined(input.publish ?? {}) },
    reward: (input.reward ?? trainDefaults.reward) as RewardMode,
    rewardWeights: { ...trainDefaults.rewardWeights, ...defined(input.rewardWeights ?? {}) },
    loss: loss as LossConfig,
    lora: { ...trainDefaults.lora, ...defined(input.lora ?? {}) },
    groupsPerStep: input.groupsPerStep ?? trainDefaults.groupsPerStep,
    stepsPerCycle: input.stepsPerCycle ?? trainDefaults.stepsPerCycle,
    leaseSeconds: input.leaseSeconds ?? trainDefaults.leaseSeconds,
    owner: input.owner,
    seed: input.seed ?? trainDefaults.seed,
    maxSequenceTokens:
      input.maxSequenceTokens === undefined ? trainDefaults.maxSequenceTokens : input.maxSequenceTokens,
    sft: { ...trainDefaults.sft, ...defined(input.sft ?? {}) } as SftSettings,
  } satisfies TrainConfig;
  issues.push(...trainConfigIssues(config));
  if (issues.length > 0) throw new TrainConfigError(issues);
  return config;
}

/** Every problem with a complete config except the loss's own (resolveLossConfig checks those). */
export function trainConfigIssues(config: TrainConfig): string[] {
  const issues: string[] = [];
  const oneOf = (field: string, value: string, names: readonly string[]) => {
    if (!names.includes(value)) issues.push(`${field} must be one of ${names.join(', ')}, got "${value}"`);
  };
  const positiveInt = (field: string, value: number, max = Number.MAX_SAFE_INTEGER) => {
    if (!(Number.isInteger(value) && value >= 1 && value <= max)) {
      issues.push(`${field} must be an integer between 1 and ${max}, got ${value}`);
    }
  };
  oneOf('mode', config.mode, trainModes);
  oneOf('--reward', config.reward, rewardModes);
  oneOf('--sft-reward', config.sft.rewardField, sftRewardFields);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(config.policyName)) {
    issues.push(
      `--policy must be letters, digits, ".", "_" or "-" (it becomes the adapter name "<policy>@<version>"), got "${config.policyName}"`,
    );
  }
  if (config.modelDir.trim() === '') issues.push('--model must name a Hugging Face model directory');
  if (config.owner.trim() === '' || config.owner.length > 200) issues.push('owner must be 1–200 characters');
  if (config.inference.baseUrl === '') {
    issues.push(
      '--inference-url (or EDGERL_INFERENCE_URL) is required: the OpenAI-compatible endpoint that serves the adapters, e.g. http://127.0.0.1:8000/v1',
    );
  } else {
    let url: URL | undefined;
    try {
      url = new URL(config.inference.baseUrl);
    } catch {
      // reported below
    }
    if (!url || !['http:', 'https:'].includes(url.protocol)) {
      issues.push(
        `--inference-url must be an http(s) URL such as http://127.0.0.1:8000/v1, got "${config.inference.baseUrl}"`,
      );
    } else if (!url.pathname.endsWith('/v1')) {
      issues.push(
        `--inference-url must end in /v1 (the OpenAI base URL), got "${config.inference.baseUrl}"; try "${config.inference.baseUrl}/v1"`,
      );
    }
  }
  positiveInt('--keep-checkpoints', config.keepCheckpoints, 100_000);
  positiveInt('inference timeout (ms)', config.inference.timeoutMs, 3_600_000);
  const { abTestWeight, makeDefault } = config.publish;
  if (abTestWeight !== null && !(abTestWeight > 0 && abTestWeight < 1)) {
    issues.push(
      `--ab-test must be the new version's share of traffic, strictly between 0 and 1, got ${abTestWeight}`,
    );
  }
  if (abTestWeight !== null && makeDefault) {
    issues.push(
      '--ab-test lets the experiment decide which version serves: add --no-default (or drop --ab-test)',
    );
  }
  for (const [field, weight] of Object.entries(config.rewardWeights)) {
    if (!Number.isFinite(weight))
      issues.push(`reward weight ${field} must be a finite number, got ${weight}`);
  }
  if (
    config.reward === 'ruler+verifier' &&
    config.rewardWeights.judge === 0 &&
    config.rewardWeights.verifier === 0
  ) {
    issues.push(
      'with --reward ruler+verifier at least one of the judge and verifier weights must be non-zero',
    );
  }
  positiveInt('--lora-rank', config.lora.r, 4096);
  if (!(config.lora.alpha > 0 && Number.isFinite(config.lora.alpha)))
    issues.push(`--lora-alpha must be > 0, got ${config.lora.alpha}`);
  if (!(config.lora.dropout >= 0 && config.lora.dropout < 1))
    issues.push(`LoRA dropout must be in [0, 1), got ${config.lora.dropout}`);
  if (!loraInitAs.includes(config.lora.initA))
    issues.push(`--lora-init-a must be one of ${loraInitAs.join(', ')}, got ${String(config.lora.initA)}`);
  const unknownTargets = config.lora.targets.filter((target) => !projections.includes(target));
  if (config.lora.targets.length === 0 || unknownTargets.length > 0) {
    issues.push(
      `--lora-targets must list projections among ${projections.join(', ')}${unknownTargets.length > 0 ? `; unknown: ${unknownTargets.join(', ')}` : ''}`,
    );
  }
  positiveInt('--groups-per-step', config.groupsPerStep, 1000);
  positiveInt('--steps-per-cycle', config.stepsPerCycle, 10_000);
  if (!(config.leaseSeconds >= 10 && config.leaseSeconds <= 86_400)) {
    issues.push(`--lease-seconds must be between 10 and 86400, got ${config.leaseSeconds}`);
  }
  if (!(Number.isInteger(config.seed) && config.seed >= 0 && config.seed <= 0xffffffff)) {
    issues.push(`--seed must be an integer between 0 and ${0xffffffff}, got ${config.seed}`);
  }
  if (config.maxSequenceTokens !== null) positiveInt('--max-sequence-tokens', config.maxSequenceTokens);
  if (
    config.loss !== undefined &&
    config.maxSequenceTokens !== null &&
    config.maxSequenceTokens > config.loss.microBatchTokens
  ) {
    issues.push(
      `--max-sequence-tokens (${config.maxSequenceTokens}) exceeds --micro-batch-tokens (${config.loss.microBatchTokens}): a sequence must fit in one micro-batch; raise --micro-batch-tokens`,
    );
  }
  if (!Number.isFinite(config.sft.minReward))
    issues.push(`--min-reward must be a number, got ${config.sft.minReward}`);
  positiveInt('--sft-limit', config.sft.limit, 100_000);
  positiveInt('--epochs', config.sft.epochs, 1000);
  positiveInt('--sft-batch', config.sft.sequencesPerStep, 10_000);
  if (!(config.sft.learningRate > 0 && Number.isFinite(config.sft.learningRate))) {
    issues.push(`SFT learning rate must be > 0, got ${config.sft.learningRate}`);
  }
  return issues;
}
