// The staleness verdict and the lineage walk, on a hand-made version tree:
//   v0 ← v1 ← v2 ← v3 (head)        v0 ← b1 (a branch off the head's lineage)
import { describe, expect, it } from 'vitest';
import { judgeStaleness, type LineageVersion, VersionLineage } from './staleness.ts';

const tree: Record<string, LineageVersion> = {
  v0: { id: 'v0', adapterName: 'agent@0', parentVersionId: null },
  v1: { id: 'v1', adapterName: 'agent@1', parentVersionId: 'v0' },
  v2: { id: 'v2', adapterName: 'agent@2', parentVersionId: 'v1' },
  v3: { id: 'v3', adapterName: 'agent@3', parentVersionId: 'v2' },
  b1: { id: 'b1', adapterName: 'agent@4', parentVersionId: 'v0' },
};

function lineage() {
  const loads: string[] = [];
  const walk = new VersionLineage(async (id) => {
    loads.push(id);
    const version = tree[id];
    if (!version) throw new Error(`no version ${id}`);
    return version;
  });
  return { walk, loads };
}

describe('VersionLineage', () => {
  it('measures parent links from the head, reading each version once', async () => {
    const { walk, loads } = lineage();
    expect([...(await walk.distancesFrom('v3')).entries()]).toEqual([
      ['v3', 0],
      ['v2', 1],
      ['v1', 2],
      ['v0', 3],
    ]);
    await walk.distancesFrom('v3');
    await walk.distancesFrom('v2');
    expect(loads).toEqual(['v3', 'v2', 'v1', 'v0']);
  });

  it('judges a group by its oldest trajectory; the bound is inclusive', async () => {
    const { walk } = lineage();
    expect(await walk.judge('v3', ['v3', 'v1', null], 2)).toEqual({
      kind: 'fresh',
      perTrajectory: [0, 2, 0],
      max: 2,
    });
    expect(await walk.judge('v3', ['v3', 'v0'], 2)).toEqual({
      kind: 'stale',
      reason:
        'stale: sampled by agent@0, 3 version(s) behind agent@3 (the head); --max-off-policy-steps is 2',
    });
    expect(await walk.judge('v3', ['v0'], 0)).toMatchObject({ kind: 'stale' });
    expect(await walk.judge('v3', ['v3'], 0)).toEqual({ kind: 'fresh', perTrajectory: [0], max: 0 });
  });

  it('calls a sampler off the head lineage stale whatever the bound', async () => {
    const { walk } = lineage();
    expect(await walk.judge('v3', ['v3', 'b1'], 1_000_000)).toEqual({
      kind: 'stale',
      reason: 'stale: sampled by agent@4, which is not on the lineage of agent@3 (the head)',
    });
  });

  it('without a head nothing is behind', () => {
    expect(judgeStaleness(['v0', null], new Map(), 0, {})).toEqual({
      kind: 'fresh',
      perTrajectory: [0, 0],
      max: 0,
    });
  });
});
