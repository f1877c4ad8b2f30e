// RULER wired to the trajectory store (a fresh migrated store: PGlite, or the suite's Postgres server): a group is read back as chat
// messages, judged by the stand-in judge HTTP server (a test double), and its scores, rewards and
// status land in the tables; a judge that keeps failing leaves the group `unscored` with the reason.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as schema from '../../db/schema/index.ts';
import type { Store } from '../../db/store.ts';
import { formatScoreReport } from '../../trainer/ruler/format-score-report.ts';
import { createJudgeClient } from '../../trainer/ruler/judge-client.ts';
import { loadJudgeGroup } from '../../trainer/ruler/load-judge-group.ts';
import { resolveRulerConfig } from '../../trainer/ruler/ruler-config.ts';
import { scoreAndRecordGroup } from '../../trainer/ruler/score-and-record.ts';
import { storeJudgeScoreSink } from '../../trainer/ruler/store-sink.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';
import { answerWith, type JudgeServer, startJudgeServer } from '../doubles/judge-server.ts';
import { lookupGroup, lookupTools } from './lookup-group.ts';
import { storeLookupGroup } from './store-lookup-group.ts';

let testStore: TestStore;
let store: Store;
let server: JudgeServer;

beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
  server = await startJudgeServer();
});
afterAll(async () => {
  await server?.close();
  await testStore?.close();
});

function deps() {
  const config = resolveRulerConfig({
    baseUrl: server.baseUrl,
    model: 'judge-test',
    maxRetries: 1,
    backoffBaseMs: 0,
    pricePromptPerMillion: 1,
    priceCompletionPerMillion: 4,
    rewardWeights: { judge: 0.5, verifier: 0.5 },
  });
  return {
    config,
    client: createJudgeClient(config),
    sink: storeJudgeScoreSink(store),
    sleep: async () => {},
  };
}

describe('RULER on the trajectory store', () => {
  it('reads a stored group, skips an errored episode, and records scores, rewards and `scored`', async () => {
    const { groupId, ids } = await storeLookupGroup(store, 'store-ok', 4, {
      lastErrors: true,
      tools: lookupTools,
    });
    const loaded = await loadJudgeGroup(store, groupId);
    expect(loaded.group.trajectories.map((t) => t.id)).toEqual(ids.slice(0, 3));
    // The judge is shown the tools stored with the trajectories.
    expect(loaded.group.tools).toEqual(lookupTools);
    expect(loaded.toolsMissing).toBe(0);
    expect(loaded.env).toBe('multi-hop');
    expect(loaded.skipped).toEqual([{ trajectoryId: ids[3], status: 'error' }]);
    // Messages round-trip through the turns table unchanged (compared as content, not key order).
    expect(loaded.group.trajectories[0]?.messages).toEqual(lookupGroup()[0]?.messages);
    expect(loaded.group.verifierRewards).toEqual({
      [ids[0] as string]: 1,
      [ids[1] as string]: 0,
      [ids[2] as string]: 0,
    });

    // The judge gives 0.9 to the first fixture trajectory (recognised by its last message), 0.3 otherwise.
    const firstAnswer = JSON.stringify(lookupGroup()[0]?.messages.at(-1));
    server.enqueue(
      answerWith((block) => (JSON.stringify(block.messages.at(-1)) === firstAnswer ? 0.9 : 0.3)),
    );
    const outcome = await scoreAndRecordGroup(loaded.group, deps());
    expect(outcome.status).toBe('scored');

    const [group] = await store.db
      .select()
      .from(schema.rolloutGroups)
      .where(eq(schema.rolloutGroups.id, groupId));
    expect(group?.status).toBe('scored');
    const rows = await store.db
      .select()
      .from(schema.trajectories)
      .where(eq(schema.trajectories.groupId, groupId));
    const byId = new Map(rows.map((row) => [row.id, row]));
    // First: 0.5·0.9 + 0.5·1 = 0.95; the others: 0.5·0.3 + 0.5·0 = 0.15; the errored one untouched.
    expect(byId.get(ids[0] as string)).toMatchObject({ judgeScore: 0.9, verifierReward: 1 });
    expect(byId.get(ids[0] as string)?.finalReward).toBeCloseTo(0.95, 12);
    expect(byId.get(ids[1] as string)?.finalReward).toBeCloseTo(0.15, 12);
    expect(byId.get(ids[3] as string)).toMatchObject({ judgeScore: null, finalReward: null });
    const judged = await store.db.select().from(schema.judgeScores);
    const mine = judged.filter((row) => ids.includes(row.trajectoryId));
    expect(mine).toHaveLength(3);
    // 1000 prompt tokens over 3 → 334, 333, 333; 100 completion → 34, 33, 33 (the double's usage).
    expect(mine.map((row) => row.promptTokens).sort()).toEqual([333, 333, 334]);
    expect(mine.every((row) => row.judgeModel === 'judge-test' && row.rubricHash.length === 64)).toBe(true);
    // (1000·1 + 100·4) / 1e6 = 0.0014 USD in all.
    expect(mine.reduce((sum, row) => sum + (row.costUsd ?? 0), 0)).toBeCloseTo(0.0014, 12);
    // Each row keeps where its score came from: the judging's hash, the one ordering's score, the
    // verifier reward and weights that made the final reward.
    if (outcome.result.status !== 'scored') throw new Error('expected scored');
    const first = mine.find((row) => row.trajectoryId === ids[0]);
    expect(first?.details).toEqual({
      groupHash: outcome.result.groupHash,
      orderingScores: [0.9],
      verifierReward: 1,
      weights: { judge: 0.5, verifier: 0.5 },
      reward: byId.get(ids[0] as string)?.finalReward,
      cached: false,
      noSignal: false,
      notes: outcome.result.notes,
    });

    const report = formatScoreReport(groupId, outcome);
    expect(report).toContain(`${ids[0]}  score 0.900 verifier 1.000 → reward 0.950`);
    expect(report).toContain('judge usage: 1000 prompt + 100 completion tokens, ~$0.0014');
    server.verify();
  });

  it('leaves the group `unscored` with the reason when the judge keeps failing', async () => {
    const { groupId } = await storeLookupGroup(store, 'store-fail', 2);
    const loaded = await loadJudgeGroup(store, groupId);
    // Rows without a stored tool list are counted; the judge then sees no tools.
    expect(loaded.toolsMissing).toBe(2);
    expect(loaded.group.tools).toBeUndefined();
    server.enqueue({ kind: 'status', status: 500 }, { kind: 'status', status: 500 });
    const outcome = await scoreAndRecordGroup(loaded.group, deps());
    expect(outcome.status).toBe('unscored');
    const [group] = await store.db
      .select()
      .from(schema.rolloutGroups)
      .where(eq(schema.rolloutGroups.id, groupId));
    expect(group).toMatchObject({
      status: 'unscored',
      statusReason: 'judge failed after 2 attempt(s): http: HTTP 500: status 500',
    });
    expect(formatScoreReport(groupId, outcome)).toContain('unscored — judge failed after 2 attempt(s)');
    server.verify();
  });
});
