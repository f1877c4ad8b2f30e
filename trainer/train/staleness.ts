// How far behind the head a group's samples are: the head is the version the trainer's adapter was
// trained from (its lineage's last published one), and a trajectory's staleness is the number of
// parent links from the head back to the version that sampled it (trajectories.policy_version_id).
// A group is as stale as its oldest trajectory; one more than `--max-off-policy-steps` behind, or
// sampled by a version that is not on the head's lineage at all (a rolled-back branch), is skipped.
// The verdict is pure; the lineage walk reads versions through a loader and caches them (a
// version's parent never changes).

export interface LineageVersion {
  readonly id: string;
  readonly adapterName: string;
  readonly parentVersionId: string | null;
}

export type StalenessVerdict =
  | {
      readonly kind: 'fresh';
      /** Versions behind the head, per trajectory, in the order given. */
      readonly perTrajectory: readonly number[];
      readonly max: number;
    }
  | { readonly kind: 'stale'; readonly reason: string };

/** Walks parent links from a head and measures distances along them. */
export class VersionLineage {
  readonly #load: (versionId: string) => Promise<LineageVersion>;
  readonly #versions = new Map<string, LineageVersion>();
  readonly #distances = new Map<string, Map<string, number>>();

  constructor(load: (versionId: string) => Promise<LineageVersion>) {
    this.#load = load;
  }

  async version(versionId: string): Promise<LineageVersion> {
    const known = this.#versions.get(versionId);
    if (known) return known;
    const loaded = await this.#load(versionId);
    this.#versions.set(versionId, loaded);
    return loaded;
  }

  /** Every ancestor of `headId` (itself included) with its distance: the head 0, its parent 1, … */
  async distancesFrom(headId: string): Promise<ReadonlyMap<string, number>> {
    const cached = this.#distances.get(headId);
    if (cached) return cached;
    const distances = new Map<string, number>();
    let at: string | null = headId;
    while (at !== null && !distances.has(at)) {
      distances.set(at, distances.size);
      at = (await this.version(at)).parentVersionId;
    }
    this.#distances.set(headId, distances);
    return distances;
  }

  /** The verdict on one group whose trajectories were sampled by `samplerIds`. */
  async judge(headId: string | null, samplerIds: readonly (string | null)[], bound: number) {
    if (headId === null) return judgeStaleness(samplerIds, new Map(), bound, {});
    const distances = await this.distancesFrom(headId);
    const names: Record<string, string> = { [headId]: (await this.version(headId)).adapterName };
    for (const id of samplerIds)
      if (id !== null && !(id in names)) names[id] = (await this.version(id)).adapterName;
    return judgeStaleness(samplerIds, distances, bound, names, headId);
  }
}

/**
 * Fresh when every sampler is on the head's lineage at most `bound` versions back; the reason of a
 * stale verdict names the oldest sampler and the head. Without a head (a policy with no version),
 * and for a trajectory without a recorded version, the distance is 0: there is nothing to be behind.
 */
export function judgeStaleness(
  samplerIds: readonly (string | null)[],
  distances: ReadonlyMap<string, number>,
  bound: number,
  names: Readonly<Record<string, string>>,
  headId?: string,
): StalenessVerdict {
  const head = headId === undefined ? 'the head' : `${names[headId] ?? headId} (the head)`;
  const perTrajectory: number[] = [];
  let oldest: { id: string; distance: number } | undefined;
  for (const id of samplerIds) {
    if (id === null || headId === undefined) {
      perTrajectory.push(0);
      continue;
    }
    const distance = distances.get(id);
    if (distance === undefined) {
      return {
        kind: 'stale',
        reason: `stale: sampled by ${names[id] ?? id}, which is not on the lineage of ${head}`,
      };
    }
    perTrajectory.push(distance);
    if (!oldest || distance > oldest.distance) oldest = { id, distance };
  }
  const max = Math.max(0, ...perTrajectory);
  if (oldest && max > bound) {
    return {
      kind: 'stale',
      reason: `stale: sampled by ${names[oldest.id] ?? oldest.id}, ${max} version(s) behind ${head}; --max-off-policy-steps is ${bound}`,
    };
  }
  return { kind: 'fresh', perTrajectory, max };
}
