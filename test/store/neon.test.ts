// The Worker driver (Neon serverless WebSocket Pool) against a real Postgres server, through a local
// WebSocket-to-TCP tunnel: migrations from the embedded copy, interactive transactions (turn appends,
// group completion, claims) and the SQL sandbox over the same driver. Needs a server, so it runs when
// EDGERL_TEST_DATABASE_URL is set (CI's second run); PGlite cannot sit behind the Neon protocol here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type NeonSettings, openNeonStore } from '../../db/drivers/open-neon-store.ts';
import type { Store } from '../../db/store.ts';
import { assistantTurn, makeGroup, userTurn } from '../support/fixtures.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';
import { startWsTcpTunnel, type Tunnel } from '../support/ws-tcp-tunnel.ts';
import { createTestSandbox } from '../support/test-sandbox.ts';
import { neonReadOnlySql } from '../../sandbox/neon-read-only-sql.ts';

describe.runIf(testServerUrl)('the Neon WebSocket driver', () => {
  let tunnel: Tunnel;
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    tunnel = await startWsTcpTunnel();
    database = await createTestDatabase(testServerUrl as string);
    const neon: NeonSettings = {
      webSocketConstructor: WebSocket as unknown as NeonSettings['webSocketConstructor'],
      wsProxy: (host, port) => `${tunnel.address}/v2?address=${host}:${port}`,
      useSecureWebSocket: false,
      pipelineTLS: false,
      pipelineConnect: false,
    };
    // A fresh database migrated through the Worker path: the embedded migrations, no file system.
    store = await openNeonStore({ url: database.url, neon, migrations: 'apply' });
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
    await tunnel?.close();
  });

  it('migrates an empty database from the embedded migrations', async () => {
    expect(await store.pendingMigrations()).toEqual([]);
    const views = await store.sql.query(
      "select table_name from information_schema.views where table_schema = 'public' order by table_name",
    );
    // The store's own four views, the analysis views of the A/B migration (0004_analytics_views) and
    // the per-version split rewards (0016_validation_split).
    expect(views.rows.flat()).toEqual([
      'env_outcome_rates',
      'experiment_arm_stats',
      'group_summaries',
      'judge_vs_verifier',
      'reward_by_version_daily',
      'token_usage_by_version',
      'tool_error_rates',
      'trajectory_summaries',
      'turn_log',
      'version_split_rewards',
      'worst_trajectories',
    ]);
  });

  it('runs the episode writes in transactions and completes the group', async () => {
    const { group, trajectories } = await makeGroup(store, { size: 2 });
    const [a, b] = trajectories.map((trajectory) => trajectory.id) as [string, string];
    await store.appendTurn(userTurn(a, 0));
    expect((await store.appendTurn(assistantTurn(a, 1))).created).toBe(true);
    expect((await store.appendTurn(assistantTurn(a, 1))).created).toBe(false);
    await store.finishTrajectory({ trajectoryId: a, status: 'finished', verifierReward: 1 });
    expect(
      (await store.finishTrajectory({ trajectoryId: b, status: 'finished', verifierReward: 0 }))
        .groupCompleted,
    ).toBe(true);
    const [claimed] = await store.claimGroups({ owner: 'neon-trainer' });
    expect(claimed?.id).toBe(group.id);
    const { turns } = await store.getTrajectory(a);
    expect(turns[1]?.completionLogprobs).toEqual([-0.0123456789012345, -1.5e-7]);
  });

  it('runs the SQL sandbox on a reader role with the same values as the other drivers', async () => {
    const sandbox = await createTestSandbox(testServerUrl as string);
    // neonConfig (the tunnel) is module-global and was set by openNeonStore above.
    const sql = neonReadOnlySql(sandbox.readerUrl);
    try {
      const result = await sql.query('select count(*), min(price) from products', {
        timeoutMs: 1000,
        maxRows: 5,
      });
      expect(result.rows).toEqual([[16, '9.75']]);
      await expect(
        sql.query('select count(*) from pg_authid', { timeoutMs: 1000, maxRows: 5 }),
      ).rejects.toMatchObject({
        code: '42501',
      });
    } finally {
      await sql.close();
      await sandbox.drop();
    }
  });
});
