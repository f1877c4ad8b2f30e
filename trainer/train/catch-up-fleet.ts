// Catch-up: every replica of the fleet gets the published versions it lacks. vLLM's runtime LoRA
// loading is per process (vLLM RFC #12174), so a replica that restarted comes back with the base
// model only, and one quarantined during a publication never got the version. For each replica this
// lists what it serves (`GET /v1/models`) and, per published version (servableVersions):
//   listed, row `ready`      → nothing to do;
//   listed, row not `ready`  → verify (probe) and mark it `ready`;
//   not listed               → `loading` (the edge stops routing there), load it from the version's
//                              adapter_uri, verify, `ready`; a failure quarantines it again.
// An unreachable replica is reported and left as it is (the edge fails over on connection errors;
// when it comes back, the next catch-up finds what it lacks). Verification is the adapter's answer
// (verify-adapter.ts), against the probe the trainer recorded in the version's metadata. Retention
// runs first (retain-adapters.ts): only routable versions are loaded, the others are unloaded. A
// routable version whose serving copy was pruned (a rollback target from long ago) is copied again
// from its checkpoint directory when that still exists. Run by the trainer each cycle and by
// `edgerl fleet catch-up`.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { Store } from '../../db/store.ts';
import { redactSecrets } from '../../protocol/redact-secrets.ts';
import { type AdapterProbe, adapterProbeSchema } from './adapter-probe.ts';
import type { InferenceFleet } from './inference-endpoint.ts';
import {
  type AnswerCheck,
  copyToServingDir,
  loadOnReplica,
  type ReplicaCall,
  replicaModels,
  verifyOnReplica,
} from './publish.ts';
import { type RetentionReport, retainAdapters } from './retain-adapters.ts';

export interface CatchUpInput {
  readonly store: Store;
  readonly fleet: Pick<
    InferenceFleet,
    'replicas' | 'apiKey' | 'timeoutMs' | 'probeTolerance' | 'keepVersions'
  >;
  /** Only this policy's versions; absent: every policy's. */
  readonly policyName?: string;
  /** The trainer's serving directory, for retention's pruning (retain-adapters.ts). */
  readonly servingDir?: string;
  readonly fetch?: typeof fetch;
  /** Sees retention's report (the trainer logs it). */
  readonly onRetention?: (report: RetentionReport) => void;
}

/** The trainer's probe from a version's metadata (adapter-probe.ts); undefined for older versions. */
export function recordedProbe(version: PolicyVersion): AdapterProbe | undefined {
  const parsed = adapterProbeSchema.safeParse((version.metadata as { probe?: unknown } | null)?.probe);
  return parsed.success ? parsed.data : undefined;
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
  const retention = await retainAdapters({
    store,
    fleet: input.fleet,
    ...(input.policyName ? { policyName: input.policyName } : {}),
    ...(input.servingDir ? { servingDir: input.servingDir } : {}),
    ...(input.fetch ? { fetch: input.fetch } : {}),
  });
  input.onRetention?.(retention);
  const { routable } = await store.routableVersions({
    keepNewest: input.fleet.keepVersions,
    ...(input.policyName ? { policyName: input.policyName } : {}),
  });
  const keep = new Set(routable.map((entry) => entry.version.id));
  const versions = (
    await store.servableVersions(input.policyName ? { policyName: input.policyName } : {})
  ).filter((version) => keep.has(version.id));
  if (versions.length === 0) return input.fleet.replicas.map((replica) => emptyReport(replica));
  const [first] = versions;
  const rows = await store.listPublications(input.policyName && first ? { policyId: first.policyId } : {});
  const stateOf = new Map(rows.map((row) => [`${row.policyVersionId} ${row.replica}`, row.state]));
  const baseModels = new Map<string, string>();
  for (const policyId of new Set(versions.map((version) => version.policyId))) {
    baseModels.set(policyId, (await store.getPolicy({ policyId })).baseModel);
  }
  const checkOf = (version: PolicyVersion): AnswerCheck => ({
    probe: recordedProbe(version),
    baseModel: baseModels.get(version.policyId) as string,
    tolerance: input.fleet.probeTolerance,
  });
  for (const version of versions) await restoreServingCopy(version);
  return Promise.all(
    input.fleet.replicas.map((replica) =>
      catchUpReplica(input, replica, versions, checkOf, (versionId) =>
        stateOf.get(`${versionId} ${replica}`),
      ),
    ),
  );
}

/**
 * A routable version whose serving copy is gone (pruned while it was not routable) is copied again
 * from its checkpoint, when the serving path and the checkpoint are on this machine; otherwise the
 * load fails on the replicas and they are quarantined for it with the server's reason.
 */
async function restoreServingCopy(version: PolicyVersion): Promise<void> {
  const uri = version.adapterUri;
  const checkpoint = (version.metadata as { checkpoint?: unknown } | null)?.checkpoint;
  if (!uri || existsSync(uri) || typeof checkpoint !== 'string' || !existsSync(checkpoint)) return;
  if (!existsSync(dirname(uri))) return;
  await copyToServingDir({
    sourceDir: checkpoint,
    servingDir: dirname(uri),
    adapterName: version.adapterName,
  });
}

async function catchUpReplica(
  input: CatchUpInput,
  replica: string,
  versions: readonly PolicyVersion[],
  checkOf: (version: PolicyVersion) => AnswerCheck,
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
  if (!models.ok) return { ...report, unreachable: redactSecrets(models.reason) };
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
        error: redactSecrets(`catch-up: ${reason}`).slice(0, 2000),
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
    const verified = await verifyOnReplica(call, name, checkOf(version));
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
    const replica = redactSecrets(report.replica);
    if (report.unreachable) return [`catch-up: ${replica} unreachable (${report.unreachable})`];
    const parts = [
      report.loaded.length > 0 ? `loaded ${report.loaded.join(', ')}` : '',
      report.confirmed.length > 0 ? `confirmed ${report.confirmed.join(', ')}` : '',
      report.failed.length > 0
        ? `still missing ${report.failed.map((failure) => `${failure.adapterName} (${failure.reason})`).join(', ')}`
        : '',
    ].filter((part) => part !== '');
    return parts.length > 0 ? [redactSecrets(`catch-up: ${replica}: ${parts.join('; ')}`)] : [];
  });
}
