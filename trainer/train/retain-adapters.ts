// Adapter retention on the fleet: every replica keeps loaded only what a request can be routed to
// (the store's routableVersions: each policy's default and rollback target, running experiments'
// arms, the newest `keepVersions` per policy). Every other version that a replica lists is unloaded
// there (POST /v1/unload_lora_adapter, vLLM's and serve-model's), its publications row removed (so
// the edge does not route there and catch-up does not load it again), and its copy in the serving
// directory deleted. The routable set is read again right before each replica's unloads, so a
// version that became routable meanwhile (a promote, a new experiment) is left alone. Run after each
// commit (publish-checkpoint.ts) and at the start of each catch-up (catch-up-fleet.ts). Leaves out
// checkpoints (their own retention: checkpoint.ts pruneCheckpoints).
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Store } from '../../db/store.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { redactSecrets } from '../../protocol/redact-secrets.ts';
import type { InferenceFleet } from './inference-endpoint.ts';
import { type ReplicaCall, replicaModels, unloadOnReplica } from './publish.ts';

export interface RetainInput {
  readonly store: Store;
  readonly fleet: Pick<InferenceFleet, 'replicas' | 'apiKey' | 'timeoutMs' | 'keepVersions'>;
  /** Only this policy's versions; absent: every policy's. */
  readonly policyName?: string;
  /**
   * The serving directory whose copies to prune (`<dir>/<adapter name>`); absent (`edgerl fleet
   * catch-up`), the version's adapter_uri when it is a directory on this machine named for the adapter.
   */
  readonly servingDir?: string;
  readonly fetch?: typeof fetch;
}

export interface ReplicaRetention {
  readonly replica: string;
  readonly unreachable?: string;
  /** Adapter names unloaded there now. */
  readonly unloaded: string[];
  readonly failed: { readonly adapterName: string; readonly reason: string }[];
}

export interface RetentionReport {
  readonly replicas: ReplicaRetention[];
  /** Serving copies deleted. */
  readonly pruned: string[];
}

export function replicaCall(
  fleet: Pick<InferenceFleet, 'apiKey' | 'timeoutMs'>,
  replica: string,
  doFetch?: typeof fetch,
): ReplicaCall {
  return {
    endpoint: {
      baseUrl: replica,
      timeoutMs: fleet.timeoutMs,
      ...(fleet.apiKey ? { apiKey: fleet.apiKey } : {}),
    },
    ...(doFetch ? { fetch: doFetch } : {}),
  };
}

export async function retainAdapters(input: RetainInput): Promise<RetentionReport> {
  const { store, fleet } = input;
  const routable = () =>
    store.routableVersions({
      keepNewest: fleet.keepVersions,
      ...(input.policyName ? { policyName: input.policyName } : {}),
    });
  const replicas = await Promise.all(
    fleet.replicas.map(async (replica): Promise<ReplicaRetention> => {
      const report: ReplicaRetention = { replica, unloaded: [], failed: [] };
      const call = replicaCall(fleet, replica, input.fetch);
      const models = await replicaModels(call);
      if (!models.ok) return { ...report, unreachable: redactSecrets(models.reason) };
      const listed = new Set(models.ids);
      const { unroutable } = await routable();
      for (const version of unroutable) {
        if (listed.has(version.adapterName)) {
          const unloaded = await unloadOnReplica(call, version.adapterName);
          if (!unloaded.ok) {
            report.failed.push({ adapterName: version.adapterName, reason: unloaded.reason });
            continue;
          }
          report.unloaded.push(version.adapterName);
        }
        await store.removePublication({ versionId: version.id, replica });
      }
      return report;
    }),
  );
  const pruned: string[] = [];
  for (const version of (await routable()).unroutable) {
    const path = input.servingDir ? join(input.servingDir, version.adapterName) : version.adapterUri;
    // Only a directory named for the adapter and holding one: never a path the store merely names.
    if (!path || basename(path) !== version.adapterName || !existsSync(join(path, 'adapter_config.json')))
      continue;
    try {
      await rm(path, { recursive: true, force: true });
      pruned.push(path);
    } catch (error) {
      // A copy left behind costs disk, not correctness: the next retention tries again.
      replicas[0]?.failed.push({
        adapterName: version.adapterName,
        reason: `prune ${path}: ${errorMessage(error)}`,
      });
    }
  }
  return { replicas, pruned };
}

/** One line per replica where something was unloaded or failed, and one for the pruned copies. */
export function describeRetention(report: RetentionReport): string[] {
  const lines = report.replicas.flatMap((replica) => {
    const name = redactSecrets(replica.replica);
    // An unreachable replica is reported once, by the publication or catch-up that runs beside retention.
    if (replica.unreachable) return [];
    const parts = [
      replica.unloaded.length > 0 ? `unloaded ${replica.unloaded.join(', ')}` : '',
      replica.failed.length > 0
        ? `could not unload ${replica.failed.map((failure) => `${failure.adapterName} (${failure.reason})`).join(', ')}`
        : '',
    ].filter((part) => part !== '');
    return parts.length > 0 ? [`retention: ${name}: ${parts.join('; ')}`] : [];
  });
  if (report.pruned.length > 0) lines.push(`retention: pruned ${report.pruned.length} serving cop(ies)`);
  return lines;
}
