// Fleet publication of one new version, in the three phases of OpenPipe ART's replica router
// (src/art/distributed/vllm_router.py): prepare (the adapter copied once to the serving directory,
// then loaded on every replica at once), verify (each replica lists it and answers a probe through
// it), and then the caller commits the version with the replicas that acknowledged it
// (commitTrainingCycle). Every replica's row in `publications` says where it stands: `loading` before
// its load, `verified` after its probe, `quarantined` with the phase and reason when one failed (it is
// retried by catch-up-fleet.ts). A replica already `ready` for the version (a commit repeated after a
// crash) keeps serving it while it is checked again. Leaves out the commit and the store's lease.
import type { Store } from '../../db/store.ts';
import { redactSecrets } from '../../protocol/redact-secrets.ts';
import type { InferenceFleet } from './inference-endpoint.ts';
import {
  type AnswerCheck,
  copyToServingDir,
  loadOnReplica,
  type PublishStage,
  type ReplicaCall,
  replicaModels,
  verifyOnReplica,
} from './publish.ts';

export interface FleetPublishInput {
  readonly store: Store;
  readonly versionId: string;
  /** The name requests will use: `<policy>@<version>`. */
  readonly adapterName: string;
  /** The checkpoint directory holding the PEFT files. */
  readonly sourceDir: string;
  readonly servingDir: string;
  /** The serving directory as the replicas see it (a shared mount); default `servingDir`, absolute. */
  readonly serverDir?: string;
  readonly fleet: Pick<InferenceFleet, 'replicas' | 'apiKey' | 'timeoutMs'>;
  /** What each replica's answer is held to (verify-adapter.ts). */
  readonly check: AnswerCheck;
  readonly fetch?: typeof fetch;
  /** Called once every replica has been prepared, before any is verified (a test kills one there). */
  readonly onPrepared?: () => Promise<void> | void;
}

export interface ReplicaFailure {
  readonly replica: string;
  readonly stage: PublishStage;
  readonly reason: string;
}

export type FleetPublishOutcome =
  | {
      readonly ok: true;
      /** The adapter's path as the replicas load it (what the version's adapter_uri records). */
      readonly adapterPath: string;
      /** Replicas that loaded and verified it, in fleet order. */
      readonly acknowledged: readonly string[];
      /** Replicas quarantined for it, with the phase that failed. */
      readonly failed: readonly ReplicaFailure[];
    }
  | { readonly ok: false; readonly stage: 'copy'; readonly reason: string };

export async function publishToFleet(input: FleetPublishInput): Promise<FleetPublishOutcome> {
  const { store, versionId, adapterName } = input;
  const copied = await copyToServingDir(input);
  if (!copied.ok) return { ok: false, stage: 'copy', reason: copied.reason };
  const rows = await store.listPublications({ versionId });
  const wasReady = new Set(rows.filter((row) => row.state === 'ready').map((row) => row.replica));
  const failed: ReplicaFailure[] = [];
  const quarantine = async (replica: string, stage: PublishStage, reason: string) => {
    failed.push({ replica, stage, reason });
    await store.recordPublication({
      versionId,
      replica,
      state: 'quarantined',
      error: redactSecrets(`${stage}: ${reason}`).slice(0, 2000),
    });
  };
  const call = (replica: string): ReplicaCall => ({
    endpoint: {
      baseUrl: replica,
      timeoutMs: input.fleet.timeoutMs,
      ...(input.fleet.apiKey ? { apiKey: input.fleet.apiKey } : {}),
    },
    ...(input.fetch ? { fetch: input.fetch } : {}),
  });

  // 1. Prepare: load on every replica at once.
  const prepared = await Promise.all(
    input.fleet.replicas.map(async (replica): Promise<string | undefined> => {
      if (wasReady.has(replica)) {
        // Serving it already (this commit is being repeated): leave the row alone unless it lost it.
        const listed = await replicaModels(call(replica));
        if (listed.ok && listed.ids.includes(adapterName)) return replica;
      }
      // Replica failures come back as data; a store failure throws and ends the cycle.
      await store.recordPublication({ versionId, replica, state: 'loading', attempt: true });
      const loaded = await loadOnReplica(call(replica), adapterName, copied.serverPath);
      if (loaded.ok) return replica;
      await quarantine(replica, loaded.stage, loaded.reason);
      return undefined;
    }),
  );
  await input.onPrepared?.();

  // 2. Verify each prepared replica.
  const verified = await Promise.all(
    prepared.map(async (replica): Promise<string | undefined> => {
      if (replica === undefined) return undefined;
      const checked = await verifyOnReplica(call(replica), adapterName, input.check);
      if (!checked.ok) {
        await quarantine(replica, checked.stage, checked.reason);
        return undefined;
      }
      if (!wasReady.has(replica)) await store.recordPublication({ versionId, replica, state: 'verified' });
      return replica;
    }),
  );
  return {
    ok: true,
    adapterPath: copied.serverPath,
    acknowledged: verified.filter((replica) => replica !== undefined),
    failed: input.fleet.replicas.flatMap((replica) =>
      failed.filter((failure) => failure.replica === replica),
    ),
  };
}
