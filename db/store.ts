// The store API in one object: every named query function bound to one database, with driver errors
// that break a known constraint turned into StoreErrors. Driver-agnostic and free of Node-only imports,
// so the edge Worker uses the same class (opened by open-neon-store.ts) as the trainer and the CLI.
import { toStoreError } from './database-errors.ts';
import { type MigrationReport, migrateStore, pendingMigrations } from './migrate.ts';
import type { SqlClient } from './sql-client.ts';
import type { StoreDb } from './store-db.ts';
import { storeFunctions } from './store-functions.ts';

// What callers outside db/ may name besides the Store: the types and constants of its functions.
export {
  type AbRewardSource,
  abRewardSources,
  defaultLeaseSeconds,
  defaultMinSamples,
  maxIngestEpisodes,
  maxIngestTurns,
} from './store-constants.ts';
export type { AbArmOutcomes, EndedOutcome } from './store/ab-arm-outcomes.ts';
export type { AbArm, AbExperimentView } from './store/get-ab-experiment.ts';
export type { GroupWithTrajectories } from './store/get-group.ts';
export type { IngestEpisodeInput, IngestTrajectoriesInput } from './store/ingest-episode.ts';
export { ingestEpisodeSchema } from './store/ingest-episode.ts';
export type { IngestedTrajectory, IngestResult } from './store/ingest-trajectories.ts';
export type { GroupTurnsAfter } from './store/group-turns-after.ts';
export type { TrainingRunListing } from './store/list-training-runs.ts';
export type { DefaultChangeRecord, LineageVersion, PolicyLineage } from './store/policy-lineage.ts';
export type { UnclaimableGroups } from './store/unclaimable-groups.ts';
export type { SameTaskAnswer, TaskAnswer } from './store/same-task-answers.ts';
export type { GroupFilterOptions, GroupListing, SearchGroupsInput } from './store/search-groups.ts';
export type { TrainingRunStep } from './store/training-run-steps.ts';
export type { AbExperimentListing } from './store/list-ab-experiments.ts';
export { scorableStatuses } from './store/group-transitions.ts';
export type { PublicationRow, ServingReplicas } from './store/publications.ts';
export type { RoutableReason, RoutableVersions } from './store/routable-versions.ts';
export type { SweepResult, SweepScope, SweptEpisode } from './store/sweep-trajectories.ts';
export { sweepScopes } from './store/sweep-trajectories.ts';
export type { TrajectoryClaim } from './store/claim-trajectory.ts';
export type { TrajectoryLease } from './store/trajectory-leases.ts';
export type { ClientKey, TrajectoryAccess } from './store/trajectory-access.ts';
export { accessRefusal } from './store/trajectory-access.ts';
export type { VersionSplitReward } from './store/version-split-rewards.ts';

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

type StoreFunctions = typeof storeFunctions;

/** A store function with its database bound: the same arguments after `db`, the same result. */
type Bound<F> = F extends (db: StoreDb, ...args: infer A) => Promise<infer R>
  ? (...args: A) => Promise<R>
  : never;

/** Every function of store-functions.ts, bound to this store's database. */
export type BoundStoreFunctions = { readonly [K in keyof StoreFunctions]: Bound<StoreFunctions[K]> };

// Declaration merging: the class below fills these members in its constructor, from the table.
export interface Store extends BoundStoreFunctions {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface only types what the constructor binds
export class Store {
  /** The drizzle database, for queries the named functions do not cover. */
  readonly db: StoreDb;
  /** Raw SQL with column order kept (`edgerl sql`); outside any transaction of `transaction()`. */
  readonly sql: SqlClient;
  readonly driver: StoreDriver;
  readonly target: string;
  readonly #parts: StoreParts;
  #closed = false;

  constructor(parts: StoreParts) {
    this.db = parts.db;
    this.sql = parts.sql;
    this.driver = parts.driver;
    this.target = parts.target;
    this.#parts = parts;
    const self = this as unknown as Record<string, unknown>;
    for (const [name, fn] of Object.entries(storeFunctions)) {
      const call = fn as (db: StoreDb, ...args: unknown[]) => Promise<unknown>;
      self[name] = (...args: unknown[]) => this.#run(() => call(this.db, ...args));
    }
  }

  /** Runs a store function, mapping constraint violations (unique, foreign key, check) to StoreErrors. */
  async #run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /**
   * Runs `work` in one database transaction with the same API: every function of the Store it is
   * handed runs inside the transaction, which commits when `work` resolves and rolls back when it
   * throws (the error, mapped like any store error, is rethrown). Nested calls use savepoints.
   */
  transaction<T>(work: (tx: Store) => Promise<T>): Promise<T> {
    return this.#run(() =>
      this.db.transaction((db) => work(new Store({ ...this.#parts, db, close: async () => {} }))),
    );
  }

  // SQL

  // Schema
  migrate = (): Promise<MigrationReport> => migrateStore(this.db);
  pendingMigrations = async (): Promise<string[]> => (await pendingMigrations(this.db)).map((m) => m.tag);

  /** Closes the connection pool or the embedded database; later calls are no-ops. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#parts.close();
  }
}
