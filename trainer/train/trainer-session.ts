// A trainer process's long-lived state: the lock on its output directory, the model and tokenizer, the
// adapter being trained and its AdamW state, the policy, and the lineage (step count, training run,
// the version the next one descends from, a checkpoint still waiting to be published). Opening it
// resumes from the newest checkpoint; with none, the adapter starts from the policy's serving adapter
// when that is a local PEFT directory, else fresh (B = 0: the base model). Leaves out the cycle itself.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Policy, PolicyVersion } from '../../db/schema/policies.ts';
import { isStoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { AdamW } from '../grpo/adamw.ts';
import { setLoraATrainable } from '../../model/lora.ts';
import { loadModel, type PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { loadTokenizer } from '../../model/tokenizer/load-tokenizer.ts';
import { type Checkpoint, listCheckpoints, loadCheckpointAdapter, readOptimizerState } from './checkpoint.ts';
import type { JudgeDeps } from './group-rewards.ts';
import { lockOutputDir, type OutputLock } from './output-lock.ts';
import type { Progress } from './progress.ts';
import type { TrainConfig, TrainMode } from './train-config.ts';

/** Named points of a cycle where a test may pause the process (to kill it there). */
export const hookPoints = ['claimed', 'trained', 'checkpointed', 'registered', 'published'] as const;
export type HookPoint = (typeof hookPoints)[number];

export interface TrainerDeps {
  readonly store: Store;
  readonly progress: Progress;
  /** The RULER judge; required for --reward ruler and ruler+verifier. */
  readonly judge?: JudgeDeps;
  readonly fetch?: typeof fetch;
  readonly hook?: (point: HookPoint) => Promise<void> | void;
}

export interface Lineage {
  /** Optimiser steps taken so far (the next checkpoint is step + its steps). */
  step: number;
  trainingRunId: string | undefined;
  runConfigHash: string | undefined;
  runKind: TrainMode | undefined;
  /** The version the next published one descends from. */
  parentVersionId: string | null;
}

export class TrainerSession {
  /** The adapter's name inside this process's model runtime (not the served name). */
  readonly adapterName = 'train';
  readonly config: TrainConfig;
  readonly deps: TrainerDeps;
  readonly model: PolicyModel;
  readonly tokenizer: ChatTokenizer;
  readonly policy: Policy;
  readonly configHash: string;
  optimizer: AdamW;
  lineage: Lineage;
  /** The newest checkpoint when it is not committed yet: it must be published before training on. */
  pending: Checkpoint | undefined;
  readonly #lock: OutputLock;

  private constructor(parts: {
    config: TrainConfig;
    deps: TrainerDeps;
    model: PolicyModel;
    tokenizer: ChatTokenizer;
    policy: Policy;
    lock: OutputLock;
  }) {
    this.config = parts.config;
    this.deps = parts.deps;
    this.model = parts.model;
    this.tokenizer = parts.tokenizer;
    this.policy = parts.policy;
    this.#lock = parts.lock;
    this.configHash = trainingConfigHash(parts.config);
    this.lineage = {
      step: 0,
      trainingRunId: undefined,
      runConfigHash: undefined,
      runKind: undefined,
      parentVersionId: null,
    };
    this.optimizer = undefined as unknown as AdamW; // set by restore()
    this.pending = undefined;
  }

  static async open(config: TrainConfig, deps: TrainerDeps): Promise<TrainerSession> {
    const lock = lockOutputDir(config.outputDir);
    try {
      const [model, tokenizer] = await Promise.all([
        loadModel(config.modelDir),
        loadTokenizer(config.modelDir),
      ]);
      const policy = await ensurePolicy(deps.store, config);
      const session = new TrainerSession({ config, deps, model, tokenizer, policy, lock });
      await session.restore();
      return session;
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** Longest sequence trained on. */
  get maxTokens(): number {
    return this.config.maxSequenceTokens ?? this.model.config.maxPositionEmbeddings;
  }

  get learningRate(): number {
    return this.config.mode === 'sft' ? this.config.sft.learningRate : this.config.loss.learningRate;
  }

  /**
   * Sets adapter, optimiser and lineage from the newest checkpoint on disk (or the starting adapter):
   * at open, and after a failed cycle to drop whatever it changed in memory.
   */
  async restore(): Promise<void> {
    const checkpoints = await listCheckpoints(this.config.outputDir);
    const latest = checkpoints.at(-1);
    const log = (line: string) => this.deps.progress.line(line);
    if (latest) {
      await loadCheckpointAdapter(this.model, this.adapterName, latest.dir);
      this.optimizer = this.#newOptimizer();
      if (latest.state.kind === this.config.mode) {
        this.optimizer.setState(await readOptimizerState(latest.dir));
      } else {
        log(
          `checkpoint ${latest.state.step} was written by ${latest.state.kind}; starting ${this.config.mode} with fresh optimiser moments`,
        );
      }
      this.lineage = {
        step: latest.state.step,
        trainingRunId: latest.state.trainingRunId,
        runConfigHash: latest.state.configHash,
        runKind: latest.state.kind,
        parentVersionId: latest.commit ? latest.commit.versionId : latest.state.parentVersionId,
      };
      this.pending = latest.commit ? undefined : latest;
      this.#noteShape(latest.dir);
      return;
    }
    const start = await this.deps.store.getDefaultVersion({ policyId: this.policy.id });
    const from = startingAdapterDir(start);
    if (this.model.adapterNames().includes(this.adapterName)) this.model.removeAdapter(this.adapterName);
    if (from) {
      await this.model.loadAdapter(this.adapterName, from);
      log(`starting from ${start?.adapterName}'s adapter (${from})`);
    } else {
      const { r, alpha, dropout, targets, useRslora, initA } = this.config.lora;
      this.model.addAdapter(
        this.adapterName,
        { r, alpha, dropout, targets, useRslora, initA },
        { seed: this.config.seed },
      );
    }
    this.optimizer = this.#newOptimizer();
    this.lineage = {
      step: 0,
      trainingRunId: undefined,
      runConfigHash: undefined,
      runKind: undefined,
      parentVersionId: start?.id ?? null,
    };
    this.pending = undefined;
  }

  /** The training run steps are recorded under: the lineage's, unless the mode or settings changed. */
  async ensureTrainingRun(): Promise<string> {
    const { trainingRunId, runConfigHash, runKind } = this.lineage;
    if (trainingRunId && runConfigHash === this.configHash && runKind === this.config.mode)
      return trainingRunId;
    const run = await this.deps.store.startTrainingRun({
      policyId: this.policy.id,
      ...(this.lineage.parentVersionId ? { baseVersionId: this.lineage.parentVersionId } : {}),
      config: {
        ...runConfigSummary(this.config),
        configHash: this.configHash,
        outputDir: this.config.outputDir,
      },
    });
    this.lineage = {
      ...this.lineage,
      trainingRunId: run.id,
      runConfigHash: this.configHash,
      runKind: this.config.mode,
    };
    this.deps.progress.line(`training run ${run.id} (${this.config.mode})`);
    return run.id;
  }

  async close(): Promise<void> {
    this.optimizer?.dispose();
    this.model.dispose();
    this.#lock.release();
  }

  #newOptimizer(): AdamW {
    this.optimizer?.dispose();
    // A loaded adapter's A is trainable as loaded; the configured LoRA-FA choice applies to every start.
    setLoraATrainable(this.model.adapter(this.adapterName), !this.config.lora.freezeA);
    const loss = this.config.loss;
    return new AdamW(this.model.trainableVariables(this.adapterName), {
      learningRate: this.learningRate,
      beta1: loss.adamBeta1,
      beta2: loss.adamBeta2,
      eps: loss.adamEps,
      weightDecay: loss.weightDecay,
    });
  }

  #noteShape(dir: string): void {
    const { config } = this.model.adapter(this.adapterName);
    const wanted = this.config.lora;
    if (
      config.r !== wanted.r ||
      config.alpha !== wanted.alpha ||
      config.targets.join() !== wanted.targets.join()
    ) {
      this.deps.progress.line(
        `note: resuming ${dir} with its LoRA shape (r ${config.r}, alpha ${config.alpha}, ${config.targets.join('/')}), not the configured one; use a new --output-dir to change it`,
      );
    }
  }
}

/** The policy, created (with its base weights as version 0, published and default) when missing. */
async function ensurePolicy(store: Store, config: TrainConfig): Promise<Policy> {
  try {
    return await store.getPolicy({ policyName: config.policyName });
  } catch (error) {
    if (!isStoreError(error, 'not-found')) throw error;
  }
  const policy = await store.createPolicy({ name: config.policyName, baseModel: config.baseModelName });
  const base = await store.registerPolicyVersion({
    policyId: policy.id,
    adapterName: `${config.policyName}@0`,
    metadata: { base: true },
  });
  await store.publishPolicyVersion({ versionId: base.id, makeDefault: true });
  return store.getPolicy({ policyId: policy.id });
}

/** A version's adapter directory when it is one on this machine. */
function startingAdapterDir(version: PolicyVersion | undefined): string | undefined {
  const uri = version?.adapterUri;
  if (!uri) return undefined;
  const path = uri.startsWith('file://') ? new URL(uri).pathname : uri;
  return existsSync(join(path, 'adapter_config.json')) ? path : undefined;
}

/** The settings that shape what training does; recorded with the run. */
function runConfigSummary(config: TrainConfig): Record<string, unknown> {
  return {
    mode: config.mode,
    reward: config.reward,
    rewardWeights: config.rewardWeights,
    loss: {
      ...config.loss,
      maxGradNorm: Number.isFinite(config.loss.maxGradNorm) ? config.loss.maxGradNorm : null,
    },
    lora: config.lora,
    groupsPerStep: config.groupsPerStep,
    stepsPerCycle: config.stepsPerCycle,
    seed: config.seed,
    ...(config.mode === 'sft' ? { sft: config.sft } : {}),
  };
}

export function trainingConfigHash(config: TrainConfig): string {
  return createHash('sha256')
    .update(JSON.stringify(runConfigSummary(config)))
    .digest('hex')
    .slice(0, 16);
}
