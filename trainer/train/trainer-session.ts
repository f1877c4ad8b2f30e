// A trainer process's fixed resources: the lock on its output directory, the engine holding the model
// and the adapter being trained, the tokenizer, the policy and its lease (one trainer advances a
// policy at a time), and the training runs it started (ended at close). `resume` reads where the
// lineage stands from the newest checkpoint (or the policy's serving adapter, or a fresh one) and
// loads it into the engine; the position itself travels through the cycle (cycle-state.ts), never
// stored here. Leaves out the cycle (drive-cycle.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createPolicyWithBase } from '../../db/create-policy-with-base.ts';
import type { Policy, PolicyVersion } from '../../db/schema/policies.ts';
import { isStoreError } from '../../db/errors.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { redactSecrets } from '../../protocol/redact-secrets.ts';
import type { Store } from '../../db/store.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { loadTokenizer } from '../../model/tokenizer/load-tokenizer.ts';
import { openEngine } from '../engine/open-engine.ts';
import type { AdapterShape, OptimizerSettings, TrainEngine } from '../engine/train-engine.ts';
import { listCheckpoints } from './checkpoint.ts';
import type { Lineage, Position } from './cycle-state.ts';
import type { JudgeDeps } from './group-rewards.ts';
import { lockOutputDir, type OutputLock } from './output-lock.ts';
import { runConfigSummary, trainingConfigHash } from './run-config-summary.ts';
import { VersionLineage } from './staleness.ts';
import type { Progress } from './progress.ts';
import type { TrainConfig } from './train-config.ts';
import { waitOutStore } from './wait-out-store.ts';

/**
 * Points of a cycle where a test may pause the process (to kill it there): the states of
 * cycle-state.ts as they are entered, and `prepared` (the adapter copied for the fleet, before any
 * replica loads it).
 */
export const stateHookPoints = [
  'claimed',
  'trained',
  'checkpointed',
  'registered',
  'published',
  'committed',
] as const;
export const hookPoints = [...stateHookPoints, 'prepared'] as const;
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

export class TrainerSession {
  readonly config: TrainConfig;
  readonly deps: TrainerDeps;
  /** Holds the base model, the adapter being trained and its optimiser state. */
  readonly engine: TrainEngine;
  readonly tokenizer: ChatTokenizer;
  readonly policy: Policy;
  readonly configHash: string;
  /** The policy's versions and their parents, read once each: how stale a group's samples are. */
  readonly versions: VersionLineage;
  readonly #lock: OutputLock;
  /** Runs this process carries (started here, or its unpublished checkpoint's): ended at close. */
  readonly #runs = new Set<string>();
  #leaseTimer: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(parts: {
    config: TrainConfig;
    deps: TrainerDeps;
    engine: TrainEngine;
    tokenizer: ChatTokenizer;
    policy: Policy;
    lock: OutputLock;
  }) {
    this.config = parts.config;
    this.deps = parts.deps;
    this.engine = parts.engine;
    this.tokenizer = parts.tokenizer;
    this.policy = parts.policy;
    this.#lock = parts.lock;
    this.configHash = trainingConfigHash(parts.config);
    this.versions = new VersionLineage((versionId) => parts.deps.store.getPolicyVersion(versionId));
  }

  /** Locks the output directory, opens the engine and takes the policy's lease. */
  static async open(config: TrainConfig, deps: TrainerDeps): Promise<TrainerSession> {
    const lock = lockOutputDir(config.outputDir);
    let engine: TrainEngine | undefined;
    try {
      const log = (line: string) => deps.progress.line(line);
      const [opened, tokenizer] = await Promise.all([
        openEngine(config.engine, {
          modelDir: config.modelDir,
          workers: config.workers,
          log,
          seed: config.seed,
        }),
        loadTokenizer(config.modelDir),
      ]);
      engine = opened;
      const policy = await ensurePolicy(deps.store, config);
      const session = new TrainerSession({ config, deps, engine, tokenizer, policy, lock });
      await session.#takePolicyLease();
      return session;
    } catch (error) {
      await engine?.close();
      lock.release();
      throw error;
    }
  }

  /** Longest sequence trained on. */
  get maxTokens(): number {
    return this.config.maxSequenceTokens ?? this.engine.model.maxPositionEmbeddings;
  }

  /**
   * Loads the adapter and optimiser state the lineage stands at into the engine and says where that
   * is: the newest checkpoint on disk (or the starting adapter). At open, and after a failed cycle to
   * drop whatever it changed in memory.
   */
  async resume(): Promise<Position> {
    const checkpoints = await listCheckpoints(this.config.outputDir);
    const latest = checkpoints.at(-1);
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
        return this.#startFrom(head, latest.state.step);
      }
    }
    if (!latest) return this.#startFrom(head, 0);
    const shape = await this.engine.startAdapter({ kind: 'peft', dir: latest.dir });
    await this.engine.resetOptimizer(this.#optimizerSettings());
    if (latest.state.kind === this.config.mode) {
      await this.engine.loadOptimizer(latest.dir);
    } else {
      log(
        `checkpoint ${latest.state.step} was written by ${latest.state.kind}; starting ${this.config.mode} with fresh optimiser moments`,
      );
    }
    this.#noteShape(shape, latest.dir);
    const lineage: Lineage = {
      step: latest.state.step,
      trainingRunId: latest.state.trainingRunId,
      runConfigHash: latest.state.configHash,
      runKind: latest.state.kind,
      parentVersionId: latest.commit ? latest.commit.versionId : latest.state.parentVersionId,
    };
    return { lineage, pending: latest.commit ? undefined : latest };
  }

  /** The adapter of `start` (or a fresh one), a new optimiser, and a lineage descending from `start`. */
  async #startFrom(start: PolicyVersion | undefined, step: number): Promise<Position> {
    const from = startingAdapterDir(start);
    if (from) {
      await this.engine.startAdapter({ kind: 'peft', dir: from });
      this.deps.progress.line(`starting from ${start?.adapterName}'s adapter (${from})`);
    } else {
      const { r, alpha, dropout, targets, useRslora, initA } = this.config.lora;
      await this.engine.startAdapter({
        kind: 'fresh',
        settings: { r, alpha, dropout, targets, useRslora, initA },
        seed: this.config.seed,
      });
    }
    await this.engine.resetOptimizer(this.#optimizerSettings());
    return {
      lineage: {
        step,
        trainingRunId: undefined,
        runConfigHash: undefined,
        runKind: undefined,
        parentVersionId: start?.id ?? null,
      },
      pending: undefined,
    };
  }

  /** `lineage` with the training run its steps are recorded under: its own, unless the mode or settings changed. */
  async ensureTrainingRun(lineage: Lineage): Promise<Lineage & { readonly trainingRunId: string }> {
    const { trainingRunId, runConfigHash, runKind } = lineage;
    if (
      trainingRunId &&
      this.#runs.has(trainingRunId) &&
      runConfigHash === this.configHash &&
      runKind === this.config.mode
    )
      return { ...lineage, trainingRunId };
    const run = await this.deps.store.startTrainingRun({
      policyId: this.policy.id,
      ...(lineage.parentVersionId ? { baseVersionId: lineage.parentVersionId } : {}),
      config: {
        ...runConfigSummary(this.config),
        configHash: this.configHash,
        outputDir: this.config.outputDir,
      },
    });
    this.#runs.add(run.id);
    this.deps.progress.line(`training run ${run.id} (${this.config.mode})`);
    return { ...lineage, trainingRunId: run.id, runConfigHash: this.configHash, runKind: this.config.mode };
  }

  /**
   * Ends the runs this process carries as `end` says, hands back the group leases no pending
   * checkpoint of `at` accounts for, and gives the policy lease back; once. Each write is retried
   * while the store is unreachable, all of them within --store-grace-seconds; what still fails is
   * logged and left to the lease's expiry (the next trainer marks a run left running `interrupted`).
   */
  async end(end: RunEnd, at?: Position): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const deadline = Date.now() + this.config.storeWait.graceSeconds * 1000;
    for (const trainingRunId of this.#runs) {
      await this.#withinGrace(`end training run ${trainingRunId}`, deadline, () =>
        this.deps.store.finishTrainingRun(
          end.status === 'finished'
            ? { trainingRunId, status: 'finished' }
            : { trainingRunId, status: end.status, errorReason: redactSecrets(end.reason).slice(0, 2000) },
        ),
      ).catch((error: unknown) =>
        this.deps.progress.line(`could not end training run ${trainingRunId}: ${errorMessage(error)}`),
      );
    }
    // Group leases no checkpoint accounts for go back now (a signal stops a cycle mid-way).
    await this.#withinGrace('give the group leases back', deadline, () =>
      this.deps.store.releaseOwnerLeases({
        owner: this.config.owner,
        except: at?.pending?.state.groupIds ?? [],
      }),
    ).catch((error: unknown) =>
      this.deps.progress.line(`could not release the group leases: ${errorMessage(error)}`),
    );
    await this.#releasePolicyLease(deadline);
  }

  /** `write`, retried while the store is unreachable until `deadline` (ms since the epoch). */
  async #withinGrace<T>(what: string, deadline: number, write: () => Promise<T>): Promise<void> {
    const { retrySeconds, retryCapSeconds } = this.config.storeWait;
    await waitOutStore(write, {
      baseDelayMs: retrySeconds * 1000,
      maxDelayMs: retryCapSeconds * 1000,
      maxWaitMs: Math.max(0, deadline - Date.now()),
      stopping: () => false,
      wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      log: (line) => this.deps.progress.line(line),
      what,
    });
  }

  async close(end: RunEnd = { status: 'finished' }, at?: Position): Promise<void> {
    await this.end(end, at);
    await this.engine.close();
    this.#lock.release();
  }

  /** Gives the policy lease, the engine and the lock back without touching runs or group leases
   *  (opening failed before the lineage was read). */
  async abandon(): Promise<void> {
    this.#closed = true;
    await this.#releasePolicyLease();
    await this.engine.close();
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

  /** Stops renewing and gives the lease back, retrying an unreachable store until `deadline` (ms since the epoch). */
  async #releasePolicyLease(deadline = Date.now()): Promise<void> {
    if (this.#leaseTimer) clearInterval(this.#leaseTimer);
    this.#leaseTimer = undefined;
    await this.#withinGrace('give the policy lease back', deadline, () =>
      this.deps.store.releasePolicyLease({ policyId: this.policy.id, owner: this.config.owner }),
    ).catch((error: unknown) =>
      this.deps.progress.line(`could not release the policy lease: ${errorMessage(error)}`),
    );
  }

  #optimizerSettings(): OptimizerSettings {
    const loss = this.config.loss;
    return {
      learningRate: this.config.mode === 'sft' ? this.config.sft.learningRate : loss.learningRate,
      beta1: loss.adamBeta1,
      beta2: loss.adamBeta2,
      eps: loss.adamEps,
      weightDecay: loss.weightDecay,
      trainA: !this.config.lora.freezeA,
    };
  }

  #noteShape(shape: AdapterShape, dir: string): void {
    const wanted = this.config.lora;
    if (
      shape.r !== wanted.r ||
      shape.alpha !== wanted.alpha ||
      shape.targets.join() !== wanted.targets.join()
    ) {
      this.deps.progress.line(
        `note: resuming ${dir} with its LoRA shape (r ${shape.r}, alpha ${shape.alpha}, ${shape.targets.join('/')}), not the configured one; use a new --output-dir to change it`,
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
  return createPolicyWithBase(store, { name: config.policyName, baseModel: config.baseModelName });
}

/** A version's adapter directory when it is one on this machine. */
function startingAdapterDir(version: PolicyVersion | undefined): string | undefined {
  const uri = version?.adapterUri;
  if (!uri) return undefined;
  const path = uri.startsWith('file://') ? new URL(uri).pathname : uri;
  return existsSync(join(path, 'adapter_config.json')) ? path : undefined;
}
