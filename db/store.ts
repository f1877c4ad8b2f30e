// The store API in one object: every named query function bound to one database, with driver errors
// that break a known constraint turned into StoreErrors. Driver-agnostic and free of Node-only imports,
// so the edge Worker uses the same class (opened by open-neon-store.ts) as the trainer and the CLI.
import type { TurnInput } from '../protocol/turn.ts';
import { toStoreError } from './database-errors.ts';
import { type MigrationReport, migrateStore, pendingMigrations } from './migrate.ts';
import type { SqlClient } from './sql-client.ts';
import type { StoreDb } from './store-db.ts';
import { type AbArmOutcomesInput, abArmOutcomes } from './store/ab-arm-outcomes.ts';
import { appendTurn } from './store/append-turn.ts';
import { claimGroups, type ClaimGroupsInput } from './store/claim-groups.ts';
import { type CreateGroupInput, createGroup } from './store/create-group.ts';
import {
  getDefaultVersion,
  resolvePolicyVersion,
  type SetDefaultVersionInput,
  setDefaultVersion,
} from './store/default-version.ts';
import { type CreateExperimentInput, createExperiment } from './store/create-experiment.ts';
import {
  type ExperimentRef,
  getExperiment,
  type ListExperimentsInput,
  listExperiments,
  type SetArmWeightsInput,
  setArmWeights,
  stopExperiment,
} from './store/experiments.ts';
import { type FinishTrajectoryInput, finishTrajectory } from './store/finish-trajectory.ts';
import { getAbExperiment } from './store/get-ab-experiment.ts';
import { type GetGroupInput, getGroup } from './store/get-group.ts';
import { getTrajectory } from './store/get-trajectory.ts';
import { type ReleaseGroupsInput, type RenewLeaseInput, releaseGroups, renewLease } from './store/leases.ts';
import { type ListGroupsInput, listGroups } from './store/list-groups.ts';
import { getTask, type ListTasksInput, listTasks } from './store/list-tasks.ts';
import { type MarkGroupFailedInput, markGroupComplete, markGroupFailed } from './store/mark-group.ts';
import { type MarkGroupsTrainedInput, markGroupsTrained } from './store/mark-groups-trained.ts';
import { type CreatePolicyInput, createPolicy, getPolicy, type PolicyRef } from './store/policies.ts';
import {
  type PublishPolicyVersionInput,
  publishPolicyVersion,
  type RegisterPolicyVersionInput,
  registerPolicyVersion,
  retirePolicyVersion,
} from './store/policy-versions.ts';
import {
  type MarkGroupUnscoredInput,
  markGroupUnscored,
  type RecordJudgeScoresInput,
  recordJudgeScores,
} from './store/record-judge-scores.ts';
import { type RunReadOnlyQueryInput, runReadOnlyQuery } from './store/run-read-only-query.ts';
import { type SetFinalRewardsInput, setFinalRewards } from './store/set-final-rewards.ts';
import { type StartTrajectoryInput, startTrajectory } from './store/start-trajectory.ts';
import {
  type FinishTrainingRunInput,
  finishTrainingRun,
  type RecordTrainingStepInput,
  recordTrainingStep,
  type StartTrainingRunInput,
  startTrainingRun,
} from './store/training-runs.ts';
import { type TaskInput, upsertTask, upsertTasks } from './store/upsert-tasks.ts';

export const storeDrivers = ['pglite', 'node-postgres', 'neon'] as const;
export type StoreDriver = (typeof storeDrivers)[number];

export interface StoreParts {
  readonly db: StoreDb;
  readonly sql: SqlClient;
  readonly driver: StoreDriver;
  /** What the store is connected to, for messages: a data directory or a URL without its password. */
  readonly target: string;
  readonly close: () => Promise<void>;
}

export class Store {
  /** The drizzle database, for queries the named functions do not cover. */
  readonly db: StoreDb;
  /** Raw SQL with column order kept (`edgerl sql`). */
  readonly sql: SqlClient;
  readonly driver: StoreDriver;
  readonly target: string;
  readonly #close: () => Promise<void>;
  #closed = false;

  constructor(parts: StoreParts) {
    this.db = parts.db;
    this.sql = parts.sql;
    this.driver = parts.driver;
    this.target = parts.target;
    this.#close = parts.close;
  }

  /** Runs a store function, mapping constraint violations (unique, foreign key, check) to StoreErrors. */
  async #run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  // Tasks
  upsertTasks = (input: readonly TaskInput[]) => this.#run(() => upsertTasks(this.db, input));
  upsertTask = (input: TaskInput) => this.#run(() => upsertTask(this.db, input));
  getTask = (taskId: string) => this.#run(() => getTask(this.db, taskId));
  listTasks = (input: ListTasksInput) => this.#run(() => listTasks(this.db, input));

  // Episodes
  createGroup = (input: CreateGroupInput) => this.#run(() => createGroup(this.db, input));
  startTrajectory = (input: StartTrajectoryInput) => this.#run(() => startTrajectory(this.db, input));
  appendTurn = (input: TurnInput) => this.#run(() => appendTurn(this.db, input));
  finishTrajectory = (input: FinishTrajectoryInput) => this.#run(() => finishTrajectory(this.db, input));
  getTrajectory = (trajectoryId: string) => this.#run(() => getTrajectory(this.db, trajectoryId));
  getGroup = (input: GetGroupInput) => this.#run(() => getGroup(this.db, input));
  listGroups = (input: ListGroupsInput = {}) => this.#run(() => listGroups(this.db, input));
  markGroupComplete = (groupId: string) => this.#run(() => markGroupComplete(this.db, groupId));
  markGroupFailed = (input: MarkGroupFailedInput) => this.#run(() => markGroupFailed(this.db, input));

  // Scoring and training
  recordJudgeScores = (input: RecordJudgeScoresInput) => this.#run(() => recordJudgeScores(this.db, input));
  markGroupUnscored = (input: MarkGroupUnscoredInput) => this.#run(() => markGroupUnscored(this.db, input));
  setFinalRewards = (input: SetFinalRewardsInput) => this.#run(() => setFinalRewards(this.db, input));
  claimGroups = (input: ClaimGroupsInput) => this.#run(() => claimGroups(this.db, input));
  renewLease = (input: RenewLeaseInput) => this.#run(() => renewLease(this.db, input));
  releaseGroups = (input: ReleaseGroupsInput) => this.#run(() => releaseGroups(this.db, input));
  markGroupsTrained = (input: MarkGroupsTrainedInput) => this.#run(() => markGroupsTrained(this.db, input));
  startTrainingRun = (input: StartTrainingRunInput) => this.#run(() => startTrainingRun(this.db, input));
  recordTrainingStep = (input: RecordTrainingStepInput) =>
    this.#run(() => recordTrainingStep(this.db, input));
  finishTrainingRun = (input: FinishTrainingRunInput) => this.#run(() => finishTrainingRun(this.db, input));

  // Policies and versions
  createPolicy = (input: CreatePolicyInput) => this.#run(() => createPolicy(this.db, input));
  getPolicy = (ref: PolicyRef) => this.#run(() => getPolicy(this.db, ref));
  registerPolicyVersion = (input: RegisterPolicyVersionInput) =>
    this.#run(() => registerPolicyVersion(this.db, input));
  publishPolicyVersion = (input: PublishPolicyVersionInput) =>
    this.#run(() => publishPolicyVersion(this.db, input));
  retirePolicyVersion = (versionId: string) => this.#run(() => retirePolicyVersion(this.db, versionId));
  setDefaultVersion = (input: SetDefaultVersionInput) => this.#run(() => setDefaultVersion(this.db, input));
  getDefaultVersion = (ref: PolicyRef) => this.#run(() => getDefaultVersion(this.db, ref));
  resolvePolicyVersion = (modelName: string) => this.#run(() => resolvePolicyVersion(this.db, modelName));

  // Experiments
  createExperiment = (input: CreateExperimentInput) => this.#run(() => createExperiment(this.db, input));
  getExperiment = (ref: ExperimentRef) => this.#run(() => getExperiment(this.db, ref));
  listExperiments = (input: ListExperimentsInput = {}) => this.#run(() => listExperiments(this.db, input));
  setArmWeights = (input: SetArmWeightsInput) => this.#run(() => setArmWeights(this.db, input));
  stopExperiment = (experimentId: string) => this.#run(() => stopExperiment(this.db, experimentId));
  /** By name or id, arms in position order (the control first), each with its version's name and status. */
  getAbExperiment = (reference: string) => this.#run(() => getAbExperiment(this.db, reference));
  abArmOutcomes = (input: AbArmOutcomesInput) => this.#run(() => abArmOutcomes(this.db, input));

  // SQL
  runReadOnlyQuery = (input: RunReadOnlyQueryInput) => runReadOnlyQuery(this.sql, input);

  // Schema
  migrate = (): Promise<MigrationReport> => migrateStore(this.db);
  pendingMigrations = async (): Promise<string[]> => (await pendingMigrations(this.db)).map((m) => m.tag);

  /** Closes the connection pool or the embedded database; later calls are no-ops. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#close();
  }
}
