// `edgerl ab create | list | report | stop | promote | rollback` through the CLI dispatcher, against an
// embedded store in a temporary directory (or a fresh database when EDGERL_TEST_DATABASE_URL is set),
// with trajectories seeded through the store API as the edge would write them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import type { Store } from '../../db/store.ts';
import { resolveRoute } from '../../edge/routing/resolve-route.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';

let dir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgerl-ab-cli-'));
  database = testServerUrl ? await createTestDatabase(testServerUrl) : undefined;
  env = database ? { DATABASE_URL: database.url } : { EDGERL_DATA_DIR: join(dir, 'pgdata') };
  await withStore(async (store) => {
    const policy = await store.createPolicy({ name: 'agent', baseModel: 'tiny-qwen' });
    for (let version = 0; version < 4; version++) {
      const row = await store.registerPolicyVersion({ policyId: policy.id });
      // agent@0 … agent@2 are published (agent@0 the default); agent@3 is still training.
      if (version < 3) await store.publishPolicyVersion({ versionId: row.id, makeDefault: version === 0 });
    }
    const other = await store.createPolicy({ name: 'other', baseModel: 'tiny-qwen' });
    const otherVersion = await store.registerPolicyVersion({ policyId: other.id });
    await store.publishPolicyVersion({ versionId: otherVersion.id });
  });
});
afterAll(async () => {
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** The store the CLI uses, opened between commands (the embedded store allows one process at a time). */
async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(
    database ? { url: database.url, migrations: 'apply' } : { dataDir: join(dir, 'pgdata') },
  );
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => (out += chunk));
  stderr.on('data', (chunk) => (err += chunk));
  const code = await main(args, { stdout, stderr, env });
  return { code, out, err };
}

interface Episode {
  readonly arm: string;
  readonly status: 'finished' | 'truncated' | 'error' | 'running';
  readonly reward?: number;
  readonly split?: 'train' | 'eval';
}

/** Writes episodes as the edge records routed traffic: the arm and its version on each trajectory. */
async function seed(experimentName: string, episodes: readonly Episode[]): Promise<void> {
  await withStore(async (store) => {
    const { arms } = await store.getExperiment({ name: experimentName });
    for (const [index, episode] of episodes.entries()) {
      const arm = arms.find((candidate) => candidate.name === episode.arm);
      if (!arm) throw new Error(`no arm ${episode.arm}`);
      const task = episode.split
        ? await store.upsertTask({
            env: 'multi-hop',
            key: `${experimentName}-${index}`,
            input: {},
            split: episode.split,
          })
        : undefined;
      const trajectory = await store.startTrajectory({
        env: 'multi-hop',
        ...(task ? { taskId: task.id } : {}),
        policyVersionId: arm.policyVersionId,
        experimentArmId: arm.id,
        stickinessKey: `user-${index}`,
      });
      if (episode.status === 'running') continue;
      await store.finishTrajectory({
        trajectoryId: trajectory.id,
        status: episode.status,
        ...(episode.reward === undefined ? {} : { verifierReward: episode.reward }),
        ...(episode.status === 'error' ? { errorReason: 'policy-down' } : {}),
      });
    }
  });
}

/** n finished episodes on one arm, the first `ones` with reward 1 and the rest 0. */
function binary(arm: string, ones: number, n: number, split?: 'train' | 'eval'): Episode[] {
  return Array.from({ length: n }, (_, index) => ({
    arm,
    status: 'finished',
    reward: index < ones ? 1 : 0,
    ...(split ? { split } : {}),
  }));
}

// Each command opens the embedded store (≈ 1–2 s on a loaded machine), so the flow is one experiment
// taken through every command once; the store functions' edge cases are in store-experiments.test.ts.
describe('an experiment from creation to promotion and rollback', () => {
  it('creates one with normalised weights, the first arm the control, and names bad arms', async () => {
    const { code, out, err } = await run([
      'ab',
      'create',
      'checkout',
      '--arm',
      'agent@0=3',
      '--arm',
      'agent@latest=1',
      '--min-samples',
      '12',
      '--metric',
      'success',
    ]);
    expect(err).toBe('');
    expect(code).toBe(0);
    // weights 3 : 1 → 75% and 25%; agent@latest is the newest published version, agent@2.
    expect(out).toContain(
      'created experiment checkout: metric success, 12 rewarded trajectories per arm before a verdict (--min-samples)',
    );
    expect(out).toContain('  agent@0   75.0%  control\n  agent@2   25.0%\n');
    const unknown = await run(['ab', 'create', 'bad', '--arm', 'agent@0', '--arm', 'nope@9=1']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^edgerl ab create: version "nope@9" does not exist/);
    const one = await run(['ab', 'create', 'bad', '--arm', 'agent@0']);
    expect(one).toMatchObject({
      code: 2,
      err: 'edgerl ab create: an experiment needs at least two --arm VERSION=WEIGHT, got 1\n',
    });
  });

  it('lists it', async () => {
    const { out } = await run(['ab', 'list']);
    expect(out).toMatch(
      /^experiment\s+status\s+policy\s+metric\s+needs\s+arms \(share, rewarded\)\s+created\n/,
    );
    expect(out).toMatch(/checkout\s+running\s+agent\s+success\s+12\s+agent@0 \(75%, 0\), agent@2 \(25%, 0\)/);
    expect(out).not.toContain('bad');
  });

  it('says "not enough data yet" below the sample size; --split eval counts eval tasks only', async () => {
    await seed('checkout', [
      ...binary('agent@0', 1, 6),
      ...binary('agent@0', 1, 2, 'eval'), // control: 8 rewarded, 2 successes
      ...binary('agent@2', 6, 7),
      ...binary('agent@2', 1, 1, 'eval'), // treatment: 8 rewarded, 7 successes
    ]);
    const { out } = await run(['ab', 'report', 'checkout']);
    expect(out).toMatch(/^Experiment checkout: running, metric success \(two-proportion z-test\)/);
    expect(out).toMatch(/\nagent@0 \(control\)\s+75\.0%\s+50\.0%\s+8\s+8\s+0\.250 \[/); // 2/8; 8 of 16 ended
    expect(out).toContain(
      'Not enough data yet: each arm needs 12 rewarded trajectories and agent@0 has 8, agent@2 has 8.',
    );
    const evalOnly = JSON.parse((await run(['ab', 'report', 'checkout', '--json', '--split', 'eval'])).out);
    expect(evalOnly.split).toBe('eval');
    expect(evalOnly.arms.map((arm: { rewarded: number }) => arm.rewarded)).toEqual([2, 1]);
  });

  it('reports rates, the two-proportion test and the verdict once the sample size is reached', async () => {
    await seed('checkout', [
      ...binary('agent@0', 1, 4), // control: 3 of 12 successes
      ...binary('agent@2', 4, 4), // treatment: 11 of 12
      { arm: 'agent@0', status: 'error' },
      { arm: 'agent@2', status: 'truncated', reward: 0 }, // treatment: 11 of 13
      { arm: 'agent@2', status: 'running' },
    ]);
    const { code, out } = await run(['ab', 'report', 'checkout', '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(out);
    const [control, treatment] = report.arms;
    expect(control).toMatchObject({ name: 'agent@0', control: true, ended: 13, rewarded: 12, running: 0 });
    expect(control.errorRate).toBeCloseTo(1 / 13, 12);
    expect(control.success.rate).toBeCloseTo(0.25, 12); // 3 / 12
    // SciPy: binomtest(3, 12).proportion_ci(0.95, 'wilson') = (0.08894166839405471, 0.5323053349335657)
    expect(control.success.ci[0]).toBeCloseTo(0.08894166839405471, 9);
    expect(control.success.ci[1]).toBeCloseTo(0.5323053349335657, 9);
    expect(treatment).toMatchObject({ name: 'agent@2', ended: 13, rewarded: 13, running: 1 });
    expect(treatment.truncationRate).toBeCloseTo(1 / 13, 12);
    expect(treatment.success.rate).toBeCloseTo(11 / 13, 12);
    expect(treatment.observedShare).toBeCloseTo(14 / 27, 12); // 13 ended + 1 running of 27
    // Two-proportion z-test of 3/12 vs 11/13 (pooled p̄ = 14/25), computed in Python:
    // z = (11/13 − 3/12) / √(p̄(1 − p̄)(1/12 + 1/13)) = 3.0000624369127094,
    // p = 2·scipy.stats.norm.sf(z) = 0.0026992426932233677
    const comparison = report.comparisons[0];
    expect(comparison.difference).toBeCloseTo(11 / 13 - 3 / 12, 12);
    expect(comparison.statistic).toBeCloseTo(3.0000624369127094, 9);
    expect(comparison.pValue).toBeCloseTo(0.0026992426932233677, 9);
    expect(report.enoughData).toBe(true);
    expect(report.verdict).toEqual([
      expect.stringMatching(/^agent@2 is better than agent@0: success rate \+59\.6 pp \(95% CI \+\d/),
      'Promote agent@2: edgerl ab promote checkout agent@2',
    ]);
    expect(report.notes).toEqual([
      '1 ended trajectories are left out of the reward statistics (1 ended in error).',
    ]);
  });

  it('stops routing to a stopped experiment, promotes the winner and rolls the promote back', async () => {
    await withStore(async (store) => {
      const first = await resolveRoute(store, { experiment: 'checkout', stickinessKey: 'user-1' }, undefined);
      expect(first.armName).toMatch(/^agent@[02]$/);
      expect(
        await resolveRoute(store, { experiment: 'checkout', stickinessKey: 'user-1' }, undefined),
      ).toEqual(first);
    });
    const stop = await run(['ab', 'stop', 'checkout']);
    expect(stop.out).toMatch(/^stopped experiment checkout at \S+; the edge routes no more traffic to it\n$/);

    const promote = await run(['ab', 'promote', 'checkout', 'agent@2']);
    expect(promote.err).toBe(''); // the report backs it: no note
    expect(promote.out).toBe(
      'agent: default version is now agent@2 (was agent@0)\nexperiment checkout is stopped\nundo with: edgerl ab rollback agent\n',
    );
    await withStore(async (store) => {
      // A request naming the policy, not a version, now gets the promoted version.
      expect((await resolveRoute(store, { policy: 'agent', stickinessKey: 'k' }, undefined)).model).toBe(
        'agent@2',
      );
      // So does one naming nothing on an edge whose EDGERL_DEFAULT_MODEL is the policy; an unknown default
      // model name is passed through as a served model, with no version recorded.
      const promoted = await resolveRoute(store, { stickinessKey: 'k' }, 'agent');
      expect(promoted).toEqual({ model: 'agent@2', policyVersionId: expect.any(String) });
      expect(await resolveRoute(store, { stickinessKey: 'k' }, 'base-model')).toEqual({
        model: 'base-model',
      });
      await expect(
        resolveRoute(store, { experiment: 'checkout', stickinessKey: 'k' }, undefined),
      ).rejects.toThrow(/checkout is stopped; it takes no traffic/);
    });

    const rollback = await run(['ab', 'rollback', 'agent']);
    expect(rollback.out).toBe('agent: default version is now agent@0 again (rolled back from agent@2)\n');
    await withStore(async (store) => {
      // agent@0 is the base weights, served under the base model's name.
      expect((await resolveRoute(store, { stickinessKey: 'k' }, 'agent')).model).toBe('tiny-qwen');
    });
    const again = await run(['ab', 'rollback', 'agent']);
    expect(again).toMatchObject({
      code: 1,
      err: 'edgerl ab rollback: policy "agent" has no promote left to roll back\n',
    });
  });
});

describe('an experiment whose arm no replica serves', () => {
  it('warns, naming the version, when retention unloaded it from the fleet; says nothing of served arms', async () => {
    await withStore(async (store) => {
      const policy = await store.createPolicy({ name: 'fleet-agent', baseModel: 'tiny-qwen' });
      const published = [];
      for (let version = 0; version < 4; version++) {
        const row = await store.registerPolicyVersion({ policyId: policy.id });
        await store.publishPolicyVersion({ versionId: row.id, makeDefault: version === 3 });
        published.push(row);
      }
      // The fleet serves fleet-agent@2 and @3; @1's row was removed when retention unloaded it. (@0,
      // with no adapter, is the base model, served without one.)
      for (const row of published.slice(2)) {
        await store.recordPublication({
          versionId: row.id,
          replica: 'http://replica-a:8000/v1',
          state: 'ready',
        });
      }
    });
    const served = await run([
      'ab',
      'create',
      'fleet-served',
      '--arm',
      'fleet-agent@2',
      '--arm',
      'fleet-agent@3',
    ]);
    expect(served.code).toBe(0);
    expect(served.err).toBe('');
    const unloaded = await run([
      'ab',
      'create',
      'fleet-old',
      '--arm',
      'fleet-agent@1',
      '--arm',
      'fleet-agent@3',
    ]);
    expect(unloaded.code).toBe(0);
    expect(unloaded.err).toMatch(/fleet-agent@1 is loaded on no replica .*edgerl fleet catch-up/);
    expect(unloaded.err).not.toMatch(/fleet-agent@3/);
    // A policy no fleet serves (no publication rows, one endpoint): nothing to warn about.
    const single = await run(['ab', 'create', 'single-endpoint', '--arm', 'agent@1', '--arm', 'agent@2']);
    expect(single.err).toBe('');
  });
});
