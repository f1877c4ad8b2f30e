// `edgerl train`: the GRPO trainer job (claim → score → train LoRA → checkpoint → publish), once or on
// a schedule, or supervised warm-up with --sft. The one place that reads the trainer's flags and
// environment variables; everything else receives the resolved TrainConfig.
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { openStore } from '../../db/drivers/open-store.ts';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { selectBackend } from '../../model/backend.ts';
import { type Projection, projections } from '../../model/hf-config.ts';
import { createJudgeClient } from '../../trainer/ruler/judge-client.ts';
import { createMemoryRulerCache } from '../../trainer/ruler/ruler-cache.ts';
import { rulerConfigFromEnv } from '../../trainer/ruler/ruler-config.ts';
import { createProgress, type ProgressStream } from '../../trainer/train/progress.ts';
import { type CycleReport, runCycle } from '../../trainer/train/run-cycle.ts';
import { runSft } from '../../trainer/train/sft.ts';
import {
  defaultOutputDir,
  resolveTrainConfig,
  type TrainConfig,
  type TrainConfigInput,
} from '../../trainer/train/train-config.ts';
import { type HookPoint, hookPoints, TrainerSession } from '../../trainer/train/trainer-session.ts';
import { type CommandInput, defineCommand, intFlag, stringFlag, UsageError } from '../command.ts';

export const trainCommand = defineCommand({
  name: ['train'],
  summary: "Train the policy's LoRA adapter with GRPO on scored groups (or SFT) and publish it",
  usage: `Usage: edgerl train --policy NAME --model DIR --inference-url URL [--once | --every 15m] [options]

One cycle claims complete rollout groups under a lease, scores them (RULER and/or the verifier),
runs GRPO on the policy's LoRA adapter, writes a checkpoint (PEFT dir + optimizer state), publishes
it to the inference server (load_lora_adapter, /v1/models, a probe), and only then registers the
version as published and the groups as trained. A killed run resumes from its checkpoint. Safe to
run from cron. Exit status 1 when publication failed (the previous version keeps serving).

Schedule:
  --once                     one cycle, then exit (the default)
  --every DURATION           a cycle every 30s / 15m / 1h until SIGINT or SIGTERM
Where:
  --policy NAME              the policy to train (or EDGERL_POLICY); created if missing
  --model DIR                the base model's Hugging Face directory
  --base-model-name NAME     the base model's name on the inference server (default: DIR)
  --inference-url URL        OpenAI-compatible base URL ending in /v1 (or EDGERL_INFERENCE_URL)
  --inference-api-key KEY    bearer key for it (or EDGERL_INFERENCE_API_KEY)
  --output-dir DIR           checkpoints and lock (default .edgerl/train/<policy>)
  --serving-dir DIR          where adapters are copied for the server (default <output-dir>/adapters)
  --server-adapter-dir DIR   the serving dir as the server sees it (default: --serving-dir)
  --database-url URL         postgres://… or memory:// (default DATABASE_URL; unset: embedded store)
  --data-dir DIR             the embedded store's directory (default EDGERL_DATA_DIR or .edgerl/pgdata)
  --backend NAME             node-gpu | webgpu | webgpu:software | node | wasm | cpu (or EDGERL_BACKEND)
Rewards and advantages:
  --reward MODE              ruler | verifier | ruler+verifier (default ruler; judge: JUDGE_* variables)
  --judge-weight W           with ruler+verifier: weight of the judge score (default 1)
  --verifier-weight W        with ruler+verifier: weight of the verifier reward (default 1)
  --scale-rewards MODE       none (reward − group mean, default) | group (also ÷ group std)
Loss and optimiser (defaults: README "Trainer"):
  --loss KIND                cispo (default) | ppo-clip
  --clip-low X --clip-high X ratio band [1 − low, 1 + high] (cispo 1.0/4.0, ppo-clip 0.2/0.28)
  --aggregation MODE         token-mean (default) | sequence-mean
  --beta X                   KL penalty against the base model (adapter off), default 0
  --lr X                     learning rate (default 5e-6)
  --weight-decay X           AdamW decoupled weight decay (default 0.1)
  --max-grad-norm X          global gradient-norm clip (default 1.0)
  --micro-batch-tokens N     padded tokens per forward/backward pass (default 8192)
  --groups-per-step N        groups per optimiser step (default 8)
  --steps-per-cycle N        optimiser steps per cycle (default 1)
  --max-sequence-tokens N    leave out longer sequences (default: the model's context length)
LoRA:
  --lora-rank N --lora-alpha X   (default 8 and 8)
  --lora-targets LIST        comma-separated projections (default all: ${projections.join(',')})
  --lora-init-a NAME         kaiming-uniform (PEFT's, default) | orthogonal (for a new adapter)
  --lora-freeze-a            train B only (LoRA-FA); with orthogonal A and rank = hidden size this is
                             full fine-tuning of each projection in a rotated basis
Leases and checkpoints:
  --lease-seconds N          lease on claimed groups (default 600, renewed while training)
  --owner NAME               lease owner (default <host>:<output dir>, stable across restarts)
  --seed N                   LoRA init and dropout seed (default 0)
  --keep-checkpoints N       committed checkpoints kept (default 3)
Publication:
  --no-default               publish without making the version the policy's default
  --ab-test WEIGHT           open an A/B experiment vs the parent, new version at WEIGHT (needs --no-default)
SFT (--sft: next-token loss on assistant tokens, the warm start before RL):
  --min-reward X             trajectories with reward ≥ X (default 1)
  --sft-reward FIELD         final (default) | verifier
  --env NAME                 only this environment's trajectories
  --demonstrations FILE      JSONL of {"messages": [...], "tools": [...]} to train on too
  --epochs N                 passes over the data (default 3)
  --sft-batch N              sequences per step (default 8)
  --sft-lr X                 learning rate (default 2e-4)
  --sft-limit N              most trajectories read (default 1000)`,
  options: {
    once: { type: 'boolean' },
    every: { type: 'string' },
    sft: { type: 'boolean' },
    policy: { type: 'string' },
    model: { type: 'string' },
    'base-model-name': { type: 'string' },
    'inference-url': { type: 'string' },
    'inference-api-key': { type: 'string' },
    'output-dir': { type: 'string' },
    'serving-dir': { type: 'string' },
    'server-adapter-dir': { type: 'string' },
    'database-url': { type: 'string' },
    'data-dir': { type: 'string' },
    backend: { type: 'string' },
    reward: { type: 'string' },
    'judge-weight': { type: 'string' },
    'verifier-weight': { type: 'string' },
    'scale-rewards': { type: 'string' },
    loss: { type: 'string' },
    'clip-low': { type: 'string' },
    'clip-high': { type: 'string' },
    aggregation: { type: 'string' },
    beta: { type: 'string' },
    lr: { type: 'string' },
    'weight-decay': { type: 'string' },
    'max-grad-norm': { type: 'string' },
    'micro-batch-tokens': { type: 'string' },
    'groups-per-step': { type: 'string' },
    'steps-per-cycle': { type: 'string' },
    'max-sequence-tokens': { type: 'string' },
    'lora-rank': { type: 'string' },
    'lora-alpha': { type: 'string' },
    'lora-targets': { type: 'string' },
    'lora-init-a': { type: 'string' },
    'lora-freeze-a': { type: 'boolean' },
    'lease-seconds': { type: 'string' },
    owner: { type: 'string' },
    seed: { type: 'string' },
    'keep-checkpoints': { type: 'string' },
    'no-default': { type: 'boolean' },
    'ab-test': { type: 'string' },
    'min-reward': { type: 'string' },
    'sft-reward': { type: 'string' },
    env: { type: 'string' },
    demonstrations: { type: 'string' },
    epochs: { type: 'string' },
    'sft-batch': { type: 'string' },
    'sft-lr': { type: 'string' },
    'sft-limit': { type: 'string' },
  },
  async run({ values, env, stdout, stderr }) {
    if (values.once === true && values.every !== undefined)
      throw new UsageError('choose one of --once and --every');
    const everyMs =
      values.every === undefined ? undefined : parseDuration(stringFlag(values, 'every') as string);
    const config = buildConfig(values, env);
    const pauseAt = pausePoint(env.EDGERL_TRAIN_PAUSE_AT);
    await selectBackend({
      requested: stringFlag(values, 'backend') ?? (env.EDGERL_BACKEND || undefined),
      log: (line) => stderr.write(`${line}\n`),
    });
    const storeConfig = storeConfigFromEnv(env, {
      url: stringFlag(values, 'database-url'),
      dataDir: stringFlag(values, 'data-dir'),
    });
    const store = await openStore({ url: storeConfig.url, dataDir: storeConfig.dataDir });
    const progress = createProgress(stderr as unknown as ProgressStream);
    let session: TrainerSession | undefined;
    try {
      const judge = config.mode === 'rl' && config.reward !== 'verifier' ? judgeFromEnv(env) : undefined;
      session = await TrainerSession.open(config, {
        store,
        progress,
        ...(judge ? { judge } : {}),
        ...(pauseAt ? { hook: pauseHook(pauseAt, stderr) } : {}),
      });
      const cycle = () =>
        config.mode === 'sft' ? runSft(session as TrainerSession) : runCycle(session as TrainerSession);
      if (everyMs === undefined) {
        const report = await cycle();
        stdout.write(`${describe(report)}\n`);
        return report.kind === 'publish-failed' ? 1 : 0;
      }
      return await repeat(cycle, everyMs, stdout, stderr);
    } finally {
      await session?.close();
      await store.close();
    }
  },
});

function buildConfig(values: CommandInput['values'], env: NodeJS.ProcessEnv): TrainConfig {
  const policyName = stringFlag(values, 'policy') ?? (env.EDGERL_POLICY || undefined);
  if (!policyName) throw new UsageError('--policy NAME is required (or set EDGERL_POLICY)');
  const modelDir = stringFlag(values, 'model');
  if (!modelDir) throw new UsageError("--model DIR is required (the base model's Hugging Face directory)");
  const outputDir = stringFlag(values, 'output-dir') ?? defaultOutputDir(policyName);
  const num = (key: string) => numberFlag(values, key);
  const int = (key: string) => (values[key] === undefined ? undefined : intFlag(values, key, 0));
  const abTest = num('ab-test');
  const input: TrainConfigInput = {
    mode: values.sft === true ? 'sft' : 'rl',
    policyName,
    modelDir,
    ...(stringFlag(values, 'base-model-name')
      ? { baseModelName: stringFlag(values, 'base-model-name') }
      : {}),
    outputDir,
    ...(stringFlag(values, 'serving-dir') ? { servingDir: stringFlag(values, 'serving-dir') } : {}),
    ...(stringFlag(values, 'server-adapter-dir')
      ? { serverAdapterDir: stringFlag(values, 'server-adapter-dir') }
      : {}),
    inference: {
      baseUrl: stringFlag(values, 'inference-url') ?? (env.EDGERL_INFERENCE_URL || ''),
      ...withValue(stringFlag(values, 'inference-api-key') ?? env.EDGERL_INFERENCE_API_KEY, (apiKey) => ({
        apiKey,
      })),
    },
    publish: {
      makeDefault: values['no-default'] !== true,
      abTestWeight: abTest ?? null,
    },
    reward: stringFlag(values, 'reward'),
    rewardWeights: { judge: num('judge-weight'), verifier: num('verifier-weight') },
    loss: {
      lossKind: stringFlag(values, 'loss') as TrainConfig['loss']['lossKind'] | undefined,
      aggregation: stringFlag(values, 'aggregation') as TrainConfig['loss']['aggregation'] | undefined,
      scaleRewards: stringFlag(values, 'scale-rewards') as TrainConfig['loss']['scaleRewards'] | undefined,
      beta: num('beta'),
      learningRate: num('lr'),
      weightDecay: num('weight-decay'),
      maxGradNorm: num('max-grad-norm'),
      microBatchTokens: int('micro-batch-tokens'),
      ...(num('clip-low') !== undefined || num('clip-high') !== undefined
        ? { clip: { low: num('clip-low'), high: num('clip-high') } as TrainConfig['loss']['clip'] }
        : {}),
    },
    lora: {
      r: int('lora-rank'),
      alpha: num('lora-alpha'),
      ...withValue(stringFlag(values, 'lora-targets'), (list) => ({ targets: parseTargets(list) })),
      initA: stringFlag(values, 'lora-init-a') as TrainConfig['lora']['initA'] | undefined,
      freezeA: values['lora-freeze-a'] === true ? true : undefined,
    },
    groupsPerStep: int('groups-per-step'),
    stepsPerCycle: int('steps-per-cycle'),
    leaseSeconds: num('lease-seconds'),
    owner: stringFlag(values, 'owner') ?? defaultOwner(outputDir),
    seed: int('seed'),
    maxSequenceTokens: int('max-sequence-tokens'),
    keepCheckpoints: int('keep-checkpoints'),
    sft: {
      minReward: num('min-reward'),
      rewardField: stringFlag(values, 'sft-reward') as TrainConfig['sft']['rewardField'] | undefined,
      env: stringFlag(values, 'env'),
      demonstrationsFile: stringFlag(values, 'demonstrations'),
      epochs: int('epochs'),
      sequencesPerStep: int('sft-batch'),
      learningRate: num('sft-lr'),
      limit: int('sft-limit'),
    },
  };
  try {
    return resolveTrainConfig(input);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** `<host>:<absolute output dir>`, hashed when too long for the store's 200 characters. */
function defaultOwner(outputDir: string): string {
  const owner = `${hostname()}:${resolve(outputDir)}`;
  return owner.length <= 200
    ? owner
    : `${hostname().slice(0, 100)}:${createHash('sha256').update(owner).digest('hex').slice(0, 32)}`;
}

function numberFlag(values: CommandInput['values'], key: string): number | undefined {
  const raw = stringFlag(values, key);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || Number.isNaN(value))
    throw new UsageError(`--${key} must be a number, got "${raw}"`);
  return value;
}

function withValue<T, R extends object>(value: T | undefined | '', build: (value: T) => R): R | object {
  return value === undefined || value === '' ? {} : build(value as T);
}

function parseTargets(list: string): Projection[] {
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(projections as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `--lora-targets: unknown projection(s) ${unknown.join(', ')}; choose from ${projections.join(', ')}`,
    );
  }
  return names as Projection[];
}

const durationUnits = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** `30s`, `15m`, `1h`, `500ms`; at least one second. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!match) throw new UsageError(`--every must be a duration such as 30s, 15m or 1h, got "${text}"`);
  const ms = Number(match[1]) * durationUnits[match[2] as keyof typeof durationUnits];
  if (!(ms >= 1000)) throw new UsageError(`--every must be at least 1s, got "${text}"`);
  return ms;
}

function judgeFromEnv(env: NodeJS.ProcessEnv) {
  let config: ReturnType<typeof rulerConfigFromEnv>;
  try {
    config = rulerConfigFromEnv(env);
  } catch (error) {
    throw new UsageError(`${(error as Error).message} (or train with --reward verifier)`);
  }
  return { config, client: createJudgeClient(config), cache: createMemoryRulerCache() };
}

function pausePoint(value: string | undefined): HookPoint | undefined {
  if (!value) return undefined;
  if (!(hookPoints as readonly string[]).includes(value)) {
    throw new UsageError(`EDGERL_TRAIN_PAUSE_AT must be one of ${hookPoints.join(', ')}, got "${value}"`);
  }
  return value as HookPoint;
}

/** For crash tests: at the named point, say so and wait forever (the test kills the process). */
function pauseHook(point: HookPoint, stderr: NodeJS.WritableStream) {
  return async (reached: HookPoint) => {
    if (reached !== point) return;
    stderr.write(`edgerl train: paused at ${point}\n`);
    await new Promise<never>(() => {
      setInterval(() => {}, 60_000);
    });
  };
}

async function repeat(
  cycle: () => Promise<CycleReport>,
  everyMs: number,
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
): Promise<number> {
  let stopping = false;
  let wake: (() => void) | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      stderr.write(`edgerl train: ${signal} again, exiting now\n`);
      process.exit(130);
    }
    stopping = true;
    stderr.write(`edgerl train: ${signal}: stopping after the current cycle\n`);
    wake?.();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  let failures = 0;
  try {
    while (!stopping) {
      const started = Date.now();
      try {
        const report = await cycle();
        stdout.write(`${describe(report)}\n`);
        failures = report.kind === 'publish-failed' ? failures + 1 : 0;
      } catch (error) {
        failures += 1;
        stderr.write(`edgerl train: cycle failed: ${(error as Error).message}\n`);
      }
      const wait = Math.max(0, everyMs - (Date.now() - started));
      if (stopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return failures > 0 ? 1 : 0;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

function describe(report: CycleReport): string {
  switch (report.kind) {
    case 'idle':
      return 'edgerl train: no complete group to train on';
    case 'no-signal':
      return `edgerl train: ${report.groupIds.length} group(s) without reward spread consumed; nothing published`;
    case 'published':
      return `edgerl train: published ${report.adapterName} (version ${report.version}, ${report.steps} step(s), ${report.groupIds.length} group(s))${report.resumed ? " from an earlier run's checkpoint" : ''}`;
    case 'publish-failed':
      return `edgerl train: publication of ${report.adapterName} failed at ${report.stage}: ${report.reason}`;
    case 'discarded':
      return `edgerl train: checkpoint discarded: ${report.reason}`;
  }
}
