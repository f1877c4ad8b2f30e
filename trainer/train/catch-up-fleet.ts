// Catch-up: every replica of the fleet gets the published versions it lacks. vLLM's runtime LoRA
// loading is per process (vLLM RFC #12174), so a replica that restarted comes back with the base
// model only, and one quarantined during a publication never got the version. For each replica this
// lists what it serves (`GET /v1/models`) and, per published version (servableVersions):
//   listed, row `ready`      → nothing to do;
//   listed, row not `ready`  → verify (probe) and mark it `ready`;
//   not listed               → `loading` (the edge stops routing there), load it from the version's
//                              adapter_uri, verify, `ready`; a failure quarantines it again.
// An unreachable replica is reported and left as it is (the edge fails over on connection errors;
// when it comes back, the next catch-up finds what it lacks). Run by the trainer each cycle and by
// `edgerl fleet catch-up`. Leaves out unloading retired versions.
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { Store } from '../../db/store.ts';
import type { InferenceFleet } from './inference-endpoint.ts';
import { loadOnReplica, type ReplicaCall, replicaModels, verifyOnReplica } from './publish.ts';

export interface CatchUpInput {
  readonly store: Store;
  readonly fleet: Pick<InferenceFleet, 'replicas' | 'apiKey' | 'timeoutMs'>;
  /** Only this policy's versions; absent: every policy's. */
  readonly policyName?: string;
  readonly fetch?: typeof fetch;
}

/** What one replica needed, per version's adapter name. */
export interface ReplicaCatchUp {
  readonly replica: string;
  /** Why the replica could not be asked, when it could not. */
  readonly unreachable?: string;
  /** Loaded now (it did not list them). */
  readonly loaded: string[];
  /** Listed already, row made `ready` after a probe. */
  readonly confirmed: string[];
  /** Still not served there, with why (quarantined). */
  readonly failed: { readonly adapterName: string; readonly reason: string }[];
}

export async function catchUpFleet(input: CatchUpInput): Promise<ReplicaCatchUp[]> {
  const { store } = input;
  const versions = await store.servableVersions(input.policyName ? { policyName: input.policyName } : {});
  if (versions.length === 0) return input.fleet.replicas.map((replica) => emptyReport(replica));
  const [first] = versions;
  const rows = await store.listPublications(input.policyName && first ? { policyId: first.policyId } : {});
  const stateOf = new Map(rows.map((row) => [`${row.policyVersionId} ${row.replica}`, row.state]));
  return Promise.all(
    input.fleet.replicas.map((replica) =>
      catchUpReplica(input, replica, versions, (versionId) => stateOf.get(`${versionId} ${replica}`)),
    ),
  );
}

async function catchUpReplica(
  input: CatchUpInput,
  replica: string,
  versions: readonly PolicyVersion[],
  stateOf: (versionId: string) => string | undefined,
): Promise<ReplicaCatchUp> {
  const { store } = input;
  const report = emptyReport(replica);
  const call: ReplicaCall = {
    endpoint: {
      baseUrl: replica,
      timeoutMs: input.fleet.timeoutMs,
      ...(input.fleet.apiKey ? { apiKey: input.fleet.apiKey } : {}),
    },
    ...(input.fetch ? { fetch: input.fetch } : {}),
  };
  const models = await replicaModels(call);
  if (!models.ok) return { ...report, unreachable: models.reason };
  const listed = new Set(models.ids);
  for (const version of versions) {
    const name = version.adapterName;
    const state = stateOf(version.id);
    if (listed.has(name) && state === 'ready') continue;
    const quarantine = async (reason: string) => {
      report.failed.push({ adapterName: name, reason });
      await store.recordPublication({
        versionId: version.id,
        replica,
        state: 'quarantined',
        error: `catch-up: ${reason}`.slice(0, 2000),
      });
    };
    if (!listed.has(name)) {
      await store.recordPublication({
        versionId: version.id,
        replica,
        state: 'loading',
        attempt: true,
        ...(state === 'ready'
          ? { error: 'catch-up: was ready, but the replica no longer lists it (restarted?)' }
          : {}),
      });
      // The version's adapter_uri is the path the replicas load it from (publish.ts, serverPath).
      const loaded = await loadOnReplica(call, name, version.adapterUri as string);
      if (!loaded.ok) {
        await quarantine(`${loaded.stage}: ${loaded.reason}`);
        continue;
      }
    }
    const verified = await verifyOnReplica(call, name);
    if (!verified.ok) {
      await quarantine(`${verified.stage}: ${verified.reason}`);
      continue;
    }
    await store.recordPublication({ versionId: version.id, replica, state: 'ready' });
    (listed.has(name) ? report.confirmed : report.loaded).push(name);
  }
  return report;
}

function emptyReport(replica: string): ReplicaCatchUp {
  return { replica, loaded: [], confirmed: [], failed: [] };
}

/** One line per replica that needed something (none when the fleet was caught up already). */
export function describeCatchUp(reports: readonly ReplicaCatchUp[]): string[] {
  return reports.flatMap((report) => {
    if (report.unreachable) return [`catch-up: ${report.replica} unreachable (${report.unreachable})`];
    const parts = [
      report.loaded.length > 0 ? `loaded ${report.loaded.join(', ')}` : '',
      report.confirmed.length > 0 ? `confirmed ${report.confirmed.join(', ')}` : '',
      report.failed.length > 0
        ? `still missing ${report.failed.map((failure) => `${failure.adapterName} (${failure.reason})`).join(', ')}`
        : '',
    ].filter((part) => part !== '');
    return parts.length > 0 ? [`catch-up: ${report.replica}: ${parts.join('; ')}`] : [];
  });
}
