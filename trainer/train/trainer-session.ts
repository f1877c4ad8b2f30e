// A trainer process's long-lived state: the lock on its output directory, the model and tokenizer, the
// adapter being trained and its AdamW state, the policy, and the lineage (step count, training run,
// the version the next one descends from, a checkpoint still waiting to be published). Opening it
// resumes from the newest checkpoint; with none, the adapter starts from the policy's serving adapter
// when that is a local PEFT directory, else fresh (B = 0: the base model). It holds the policy's lease
// from open to close (one trainer advances a policy at a time) and ends the training runs it started.
// Leaves out the cycle itself.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Policy, PolicyVersion } from '../../db/schema/policies.ts';
import { isStoreError } from '../../db/errors.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import type { Store } from '../../db/store.ts';
import { AdamW } from '../grpo/adamw.ts';
import { setLoraATrainable } from '../../model/lora.ts';
import { selectedBackend } from '../../model/backend.ts';
import { loadModel, type PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { loadTokenizer } from '../../model/tokenizer/load-tokenizer.ts';
import { type Checkpoint, listCheckpoints, loadCheckpointAdapter, readOptimizerState } from './checkpoint.ts';
import type { JudgeDeps } from './group-rewards.ts';
import { lockOutputDir, type OutputLock } from './output-lock.ts';
import { runConfigSummary, trainingConfigHash } from './run-config-summary.ts';
import { VersionLineage } from './staleness.ts';
import type { Progress } from './progress.ts';
import type { TrainConfig, TrainMode } from './train-config.ts';
import { TrainWorkerPool } from './workers/train-worker-pool.ts';
import { resolveWorkerCount } from './workers/worker-count.ts';

/** Named points of a cycle where a test may pause the process (to kill it there). */
export const hookPoints = [
  'claimed',
  'trained',
  'checkpointed',
  'registered',
  'prepared',
  'published',
] as const;
export type HookPoint = (typeof hookPoints)[number];

export interface TrainerDeps {
  readonly store: Store;
  readonly progress: Progress;
  /** The RULER judge; required for --reward ruler and ruler+verifier. */
  readonly judge?: JudgeDeps;
  readonly fetch?: typeof fetch;
  readonly hook?: (point: HookPoint) => Promise<void> | void;
}

/** Another trainer holds the policy's lease: this one trains nothing (`edgerl train` exits 3). */
export class PolicyLeasedError extends Error {
  override readonly name = 'PolicyLeasedError';
  readonly code = 'policy-leased';
}

/** How a trainer process ended, recorded on the runs it started. */
export type RunEnd =
  | { readonly status: 'finished' }
  | { readonly status: 'failed' | 'interrupted'; readonly reason: string };

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
  /** Data-parallel gradient workers; undefined when the steps run in this thread (one worker). */
  readonly workers: TrainWorkerPool | undefined;
  /** The policy's versions and their parents, read once each: how stale a group's samples are. */
  readonly versions: VersionLineage;
  optimizer: AdamW;
  lineage: Lineage;
  /** The newest checkpoint when it is not committed yet: it must be published before training on. */
  pending: Checkpoint | undefined;
  readonly #lock: OutputLock;
  /** Runs this process carries (started here, or its unpublished checkpoint's): ended at close. */
  readonly #runs = new Set<string>();
  #leaseTimer: NodeJS.Timeout | undefined;
  #closed = false;

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
    this.workers = gradientWorkers(parts.config, parts.deps);
    this.versions = new VersionLineage((versionId) => parts.deps.store.getPolicyVersion(versionId));
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
      await session.#takePolicyLease();
      try {
        await session.restore();
      } catch (error) {
        await session.#releasePolicyLease();
        throw error;
      }
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
    let latest = checkpoints.at(-1);
    const log = (line: string) => this.deps.progress.line(line);
    const head = await this.deps.store.getDefaultVersion({ policyId: this.policy.id });
    if (latest && this.config.publish.makeDefault && head) {
      // One lineage: a checkpoint that does not descend from the policy's default (another trainer
      // published meanwhile) is not continued; training starts again from the default's adapter.
      const from = latest.commit ? latest.commit.versionId : latest.state.parentVersionId;
      if (from !== head.id) {
        log(
          `checkpoint ${latest.state.step} descends from a version that is not ${head.adapterName} (the default); starting from the default`,
        );
        const step = latest.state.step;
        latest = undefined;
        await this.#startFrom(head, step);
        return;
      }
    }
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
    await this.#startFrom(head, 0);
  }

  /** The adapter of `start` (or a fresh one), a new optimiser, and a lineage descending from `start`. */
  async #startFrom(start: PolicyVersion | undefined, step: number): Promise<void> {
    const log = (line: string) => this.deps.progress.line(line);
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
      step,
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
    if (
      trainingRunId &&
      this.#runs.has(trainingRunId) &&
      runConfigHash === this.configHash &&
      runKind === this.config.mode
    )
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
    this.#runs.add(run.id);
    this.deps.progress.line(`training run ${run.id} (${this.config.mode})`);
    return run.id;
  }

  /** Ends the runs this process carries as `end` says and gives the policy lease back; once. */
  async end(end: RunEnd): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const trainingRunId of this.#runs) {
      await this.deps.store
        .finishTrainingRun(
          end.status === 'finished'
            ? { trainingRunId, status: 'finished' }
            : { trainingRunId, status: end.status, errorReason: end.reason.slice(0, 2000) },
        )
        .catch((error: unknown) =>
          this.deps.progress.line(`could not end training run ${trainingRunId}: ${errorMessage(error)}`),
        );
    }
    // Group leases no checkpoint accounts for go back now (a signal stops a cycle mid-way).
    await this.deps.store
      .releaseOwnerLeases({ owner: this.config.owner, except: this.pending?.state.groupIds ?? [] })
      .catch((error: unknown) =>
        this.deps.progress.line(`could not release the group leases: ${errorMessage(error)}`),
      );
    await this.#releasePolicyLease();
  }

  async close(end: RunEnd = { status: 'finished' }): Promise<void> {
    await this.end(end);
    await this.workers?.close();
    this.optimizer?.dispose();
    this.model.dispose();
    this.#lock.release();
  }

  async #takePolicyLease(): Promise<void> {
    const { store, progress } = this.deps;
    const latest = (await listCheckpoints(this.config.outputDir)).at(-1);
    const keep = latest && !latest.commit ? [latest.state.trainingRunId] : [];
    const take = await store.takePolicyLease({
      policyId: this.policy.id,
      owner: this.config.owner,
      leaseSeconds: this.config.leaseSeconds,
      keepRunIds: keep,
    });
    if (!take.taken) {
      throw new PolicyLeasedError(
        `policy ${this.policy.name} is being trained by ${take.holder} (its lease runs until ${take.expiresAt.toISOString()}); one trainer advances a policy at a time`,
      );
    }
    for (const runId of keep) this.#runs.add(runId);
    if (take.interruptedRunIds.length > 0) {
      progress.line(
        `marked ${take.interruptedRunIds.length} training run(s) interrupted (left running by a trainer that stopped): ${take.interruptedRunIds.join(', ')}`,
      );
    }
    const everyMs = Math.max(1000, (this.config.leaseSeconds * 1000) / 3);
    this.#leaseTimer = setInterval(() => {
      store
        .renewPolicyLease({
          policyId: this.policy.id,
          owner: this.config.owner,
          leaseSeconds: this.config.leaseSeconds,
        })
        .catch((error: unknown) => progress.line(`policy lease renewal failed: ${errorMessage(error)}`));
    }, everyMs);
    this.#leaseTimer.unref();
  }

  async #releasePolicyLease(): Promise<void> {
    if (this.#leaseTimer) clearInterval(this.#leaseTimer);
    this.#leaseTimer = undefined;
    await this.deps.store
      .releasePolicyLease({ policyId: this.policy.id, owner: this.config.owner })
      .catch((error: unknown) =>
        this.deps.progress.line(`could not release the policy lease: ${errorMessage(error)}`),
      );
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

/** The worker pool `config.workers` (or the backend's default) asks for; none for one worker. */
function gradientWorkers(config: TrainConfig, deps: TrainerDeps): TrainWorkerPool | undefined {
  const backend = selectedBackend()?.choice;
  const size = resolveWorkerCount(config.workers, backend);
  if (size === 1) return undefined;
  if (!backend) {
    throw new Error(`--workers ${size} needs the backend chosen first (selectBackend, model/backend.ts)`);
  }
  deps.progress.line(`gradients on ${size} worker threads (${backend})`);
  return new TrainWorkerPool({ size, backend, model: { kind: 'dir', dir: config.modelDir } });
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
