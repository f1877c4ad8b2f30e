// The trainer job's one typed config, as a zod schema composed of slices (inference endpoint, loss,
// LoRA, SFT): each field's default written once beside a one-line doc, its source and its CLI flag;
// cross-field checks in `trainConfigChecks`. The CLI reads flags and env; this receives the input.
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { defaultLeaseSeconds } from '../../db/store-constants.ts';
import { documented, parseConfig } from '../../protocol/config-docs.ts';
import { ConfigError } from '../../protocol/config-error.ts';
import { finiteNumber, intBetween, numberWhere, oneOf } from '../../protocol/config-fields.ts';
import { engineSettingsSchema } from '../engine/engine-settings.ts';
import { lossConfigSchema } from '../grpo/loss-config.ts';
import { inferenceEndpointSchema } from './inference-endpoint.ts';
import { loraSettingsSchema } from './lora-settings.ts';
import { lrScheduleSettingsSchema } from './lr-schedule-settings.ts';
import { offPolicySettingsSchema } from './off-policy-settings.ts';
import { replaySettingsSchema } from './replay-settings.ts';
import { scoreRetrySettingsSchema } from './score-retry-settings.ts';
import { sftSection, sftSettingsSchema } from './sft-settings.ts';
import { storeWaitSettingsSchema } from './store-wait-settings.ts';
import { trainConfigChecks } from './train-config-checks.ts';

export type { InferenceEndpoint, InferenceFleet } from './inference-endpoint.ts';
export type { LoraShape } from './lora-settings.ts';
export type { OffPolicySettings } from './off-policy-settings.ts';
export type { ReplaySettings } from './replay-settings.ts';
export { type SftRewardField, type SftSettings, sftRewardFields } from './sft-settings.ts';

export const rewardModes = ['ruler', 'verifier', 'ruler+verifier'] as const;
/** Where a group's rewards come from: the RULER judge, the environment's verifier, or both mixed. */
export type RewardMode = (typeof rewardModes)[number];

export const trainModes = ['rl', 'sft'] as const;
export type TrainMode = (typeof trainModes)[number];

const where = 'Where';
const rewards = 'Rewards and advantages';
const steps = 'Loss and optimiser';
const leases = 'Leases and checkpoints';
const publication = 'Publication';

const publishSchema = z
  .strictObject({
    makeDefault: documented(z.boolean().default(true), {
      doc: "make each published version the policy's default (what requests naming only the policy get); off while an A/B test decides",
      source: 'the latest trained step serves, as in ART',
      flagDoc: "publish without making the version the policy's default",
      flag: 'no-default',
      sets: false,
      section: publication,
    }),
    abTestWeight: documented(
      numberWhere(
        (weight) => weight > 0 && weight < 1,
        "the new version's share of traffic, strictly between 0 and 1",
      )
        .nullable()
        .default(null),
      {
        doc: 'open an A/B experiment vs the parent, new version at this share of traffic (needs --no-default)',
        shownDefault: 'none',
        flag: 'ab-test',
        arg: 'WEIGHT',
        section: publication,
      },
    ),
  })
  .prefault({});

const policyName = z
  .string({ error: 'NAME is required (or set EDGERL_POLICY)' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, {
    error: (issue) =>
      `must be letters, digits, ".", "_" or "-" (it becomes the adapter name "<policy>@<version>"), got "${String(issue.input)}"`,
  });

const modelDir = z
  .string({ error: "DIR is required (the base model's Hugging Face directory)" })
  .refine((dir) => dir.trim() !== '', { error: 'must name a Hugging Face model directory' });

export const trainConfigSchema = z
  .strictObject({
    mode: documented(oneOf(trainModes).default('rl'), {
      doc: 'rl: GRPO on scored groups; sft: next-token loss on good trajectories and demonstrations',
      flagDoc: 'supervised warm-up instead of RL (the options below)',
      flag: 'sft',
      sets: 'sft',
      section: sftSection,
    }),
    continuous: documented(z.boolean().default(false), {
      doc: 'train while the edge keeps rolling out: a cycle whenever --groups-per-step complete groups are waiting, each version published as it is trained, until SIGINT or SIGTERM',
      flagDoc:
        'train while rollouts continue: a cycle as soon as --groups-per-step complete groups wait (bounded staleness, see Off-policy data)',
      source: "OpenPipe ART's PipelineTrainer; AReaL and verl's fully-async trainers",
      flag: 'continuous',
      sets: true,
      section: 'Schedule',
    }),
    policyName: documented(policyName, {
      doc: 'the policy to train, created if missing; adapters are published as <policy>@<version>',
      flag: 'policy',
      arg: 'NAME',
      env: 'EDGERL_POLICY',
      section: where,
    }),
    modelDir: documented(modelDir, {
      doc: "the base model's Hugging Face directory (config.json, safetensors, tokenizer files)",
      flag: 'model',
      arg: 'DIR',
      section: where,
    }),
    baseModelName: documented(z.string().optional(), {
      doc: "the base model's name on the inference server, used when the policy has to be created",
      shownDefault: 'DIR, which is what vLLM and `edgerl serve-model` call it',
      flag: 'base-model-name',
      arg: 'NAME',
      section: where,
    }),
    workers: documented(intBetween(1, 256).nullable().default(null), {
      doc: 'data-parallel gradient workers: threads, each with its own backend and copy of the model, splitting every step; the main thread alone updates the adapter',
      shownDefault: 'one per core on wasm and cpu, 1 on node, node-gpu and webgpu',
      source: 'wasm under Node computes on one thread (tfjs #3830)',
      flag: 'workers',
      arg: 'N',
      section: where,
    }),
    engine: engineSettingsSchema,
    inference: inferenceEndpointSchema,
    publish: publishSchema,
    outputDir: documented(z.string().optional(), {
      doc: "this trainer's own directory: checkpoints/{step}/ and its lock",
      shownDefault: '.edgerl/train/<policy>',
      flag: 'output-dir',
      arg: 'DIR',
      section: where,
    }),
    servingDir: documented(z.string().optional(), {
      doc: 'where published adapters are copied for the inference server (<dir>/<policy>@<version>/); on another machine, a mount the server sees at the same path',
      shownDefault: '<output-dir>/adapters',
      flag: 'serving-dir',
      arg: 'DIR',
      section: where,
    }),
    serverAdapterDir: documented(z.string().optional(), {
      doc: 'the serving dir as the inference server sees it, when it is mounted at another path there',
      shownDefault: '--serving-dir, made absolute',
      flag: 'server-adapter-dir',
      arg: 'DIR',
      section: where,
    }),
    reward: documented(oneOf(rewardModes).default('ruler'), {
      doc: 'where rewards come from (the judge reads EDGERL_JUDGE_* variables)',
      source: "RULER ranks every group with an LLM judge, ART's recommended reward",
      flag: 'reward',
      arg: 'MODE',
      section: rewards,
    }),
    rewardWeights: z
      .strictObject({
        judge: documented(finiteNumber().default(1), {
          doc: 'with ruler+verifier: weight of the judge score (reward = judge·score + verifier·verifierReward)',
          flag: 'judge-weight',
          arg: 'W',
          section: rewards,
        }),
        verifier: documented(finiteNumber().default(1), {
          doc: 'with ruler+verifier: weight of the verifier reward',
          flag: 'verifier-weight',
          arg: 'W',
          section: rewards,
        }),
      })
      .prefault({}),
    scoreRetry: scoreRetrySettingsSchema,
    storeWait: storeWaitSettingsSchema,
    loss: lossConfigSchema.prefault({}),
    lrSchedule: lrScheduleSettingsSchema,
    offPolicy: offPolicySettingsSchema,
    replay: replaySettingsSchema,
    groupsPerStep: documented(intBetween(1, 1000).default(8), {
      doc: 'groups claimed per optimiser step',
      source: 'an edgerl choice: with groups of 4–8 episodes, 32–64 episodes a step',
      flag: 'groups-per-step',
      arg: 'N',
      section: steps,
    }),
    stepsPerCycle: documented(intBetween(1, 10_000).default(1), {
      doc: 'optimiser steps per cycle, each on freshly claimed groups; one version is published per cycle',
      source: "ART's one `train` call per batch of groups",
      flag: 'steps-per-cycle',
      arg: 'N',
      section: steps,
    }),
    maxSequenceTokens: documented(intBetween(1, Number.MAX_SAFE_INTEGER).nullable().default(null), {
      doc: 'leave out (never cut: the ending is where the reward is earned) sequences longer than this many tokens',
      shownDefault: "the model's context length",
      flag: 'max-sequence-tokens',
      arg: 'N',
      section: steps,
    }),
    lora: loraSettingsSchema,
    leaseSeconds: documented(
      numberWhere((seconds) => seconds >= 10 && seconds <= 86_400, 'between 10 and 86400').default(
        defaultLeaseSeconds,
      ),
      {
        doc: 'lease on claimed groups, seconds; renewed every third of it while training',
        source: "the store's (db/store/fields.ts)",
        flag: 'lease-seconds',
        arg: 'N',
        section: leases,
      },
    ),
    owner: documented(z.string().min(1).max(200, { error: 'must be 1–200 characters' }).optional(), {
      doc: 'lease owner, stable across restarts so a resumed trainer still holds its leases',
      shownDefault: '<host>:<output dir>',
      flag: 'owner',
      arg: 'NAME',
      section: leases,
    }),
    seed: documented(intBetween(0, 0xffffffff).default(0), {
      doc: 'seed of LoRA initialisation and dropout',
      flag: 'seed',
      arg: 'N',
      section: leases,
    }),
    keepCheckpoints: documented(intBetween(1, 100_000).default(3), {
      doc: 'committed checkpoints kept; older ones are deleted (published adapters stay in the serving dir)',
      source: "an edgerl choice, like transformers' save_total_limit",
      flag: 'keep-checkpoints',
      arg: 'N',
      section: leases,
    }),
    keepBestCheckpoints: documented(intBetween(0, 100_000).default(1), {
      doc: 'also keep the checkpoints of this many versions with the best mean verifier reward on validation-split episodes (0: the newest only)',
      source:
        "OpenPipe ART's delete_checkpoints(best_checkpoint_metric=...), which keeps the latest and the best",
      flag: 'keep-best-checkpoints',
      arg: 'K',
      section: leases,
    }),
    sft: sftSettingsSchema,
  })
  .superRefine(trainConfigChecks, { when: () => true })
  .transform(({ serverAdapterDir, ...config }) => {
    const outputDir = config.outputDir ?? defaultOutputDir(config.policyName);
    return {
      ...config,
      baseModelName: config.baseModelName ?? config.modelDir,
      outputDir,
      servingDir: config.servingDir ?? join(outputDir, 'adapters'),
      ...(serverAdapterDir ? { serverAdapterDir } : {}),
      inference: {
        baseUrl: config.inference.baseUrl,
        replicas: config.inference.replicas,
        minReplicas: config.inference.minReplicas,
        timeoutMs: config.inference.timeoutMs,
        probeTolerance: config.inference.probeTolerance,
        keepVersions: config.inference.keepVersions,
        ...(config.inference.apiKey ? { apiKey: config.inference.apiKey } : {}),
      },
      owner: config.owner ?? defaultOwner(outputDir),
      offPolicy: {
        ...config.offPolicy,
        // Overlapping rollouts and training makes every batch a little stale: corrected by default.
        correction: config.offPolicy.correction ?? (config.continuous ? 'tis' : 'none'),
      },
    };
  });

/** What a caller gives: everything optional except what has no sensible default. */
export type TrainConfigInput = z.input<typeof trainConfigSchema>;
export type TrainConfig = z.output<typeof trainConfigSchema>;

/** Bad settings, one message per problem, each naming the field (as its CLI flag where there is one). */
export class TrainConfigError extends ConfigError {
  override readonly name = 'TrainConfigError';
  readonly code = 'invalid-train-config';
  constructor(issues: readonly string[]) {
    super(issues, 'invalid trainer config: ');
  }
}

/** Fills the defaults and checks every field and their combinations; throws TrainConfigError. */
export function resolveTrainConfig(input: TrainConfigInput): TrainConfig {
  return parseConfig(trainConfigSchema, input, (issues) => new TrainConfigError(issues));
}

/** The default output directory for a policy, relative to the working directory. */
export function defaultOutputDir(policyName: string): string {
  return join('.edgerl', 'train', policyName);
}

/** `<host>:<absolute output dir>`, hashed when too long for the store's 200 characters. */
function defaultOwner(outputDir: string): string {
  const owner = `${hostname()}:${resolve(outputDir)}`;
  return owner.length <= 200
    ? owner
    : `${hostname().slice(0, 100)}:${createHash('sha256').update(owner).digest('hex').slice(0, 32)}`;
}
