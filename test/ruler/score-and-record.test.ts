// scoreAndRecordGroup against the stand-in judge HTTP server (a test double) and a recording sink:
// what reaches the store for a scored and for an unscored group.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJudgeClient } from '../../trainer/ruler/judge-client.ts';
import type {
  GroupScoreSummary,
  JudgeScoreRecord,
  JudgeScoreSink,
  UnscoredDetail,
} from '../../trainer/ruler/judge-score-sink.ts';
import { createMemoryRulerCache } from '../../trainer/ruler/ruler-cache.ts';
import { resolveRulerConfig } from '../../trainer/ruler/ruler-config.ts';
import { apportion, type StoredGroup, scoreAndRecordGroup } from '../../trainer/ruler/score-and-record.ts';
import { answerWith, type JudgeServer, startJudgeServer } from '../doubles/judge-server.ts';
import { lookupGroup } from './lookup-group.ts';

/** A sink that keeps what it is given. */
function recordingSink() {
  const scored: { groupId: string; records: readonly JudgeScoreRecord[]; summary: GroupScoreSummary }[] = [];
  const unscored: { groupId: string; reason: string; detail: UnscoredDetail }[] = [];
  const sink: JudgeScoreSink = {
    async recordScores(groupId, records, summary) {
      scored.push({ groupId, records, summary });
    },
    async markUnscored(groupId, reason, detail) {
      unscored.push({ groupId, reason, detail });
    },
  };
  return { sink, scored, unscored };
}

const trajectories = lookupGroup();
// Judge score by position in the fixture: 0.0, 0.1, …, 0.7; verifier reward 1 for the even ones.
const judge = new Map(trajectories.map((t, index) => [t.id, index / 10]));
const verifierRewards = Object.fromEntries(trajectories.map((t, index) => [t.id, index % 2 === 0 ? 1 : 0]));
const group: StoredGroup = {
  groupId: 'group-42',
  trajectories: trajectories.map(({ id, messages }) => ({ id, messages })),
  verifierRewards,
};
const scoreOf = (messages: readonly unknown[]) => {
  const last = JSON.stringify(messages.at(-1));
  const found = trajectories.find((t) => JSON.stringify(t.messages.at(-1)) === last);
  return judge.get(found?.id ?? '') ?? Number.NaN;
};

let server: JudgeServer;
beforeEach(async () => {
  server = await startJudgeServer({ usage: { prompt_tokens: 1000, completion_tokens: 100 } });
});
afterEach(async () => {
  try {
    server.verify();
  } finally {
    await server.close();
  }
});

function deps(overrides: Record<string, unknown> = {}) {
  const config = resolveRulerConfig({
    baseUrl: server.baseUrl,
    model: 'judge-test',
    pricePromptPerMillion: 3,
    priceCompletionPerMillion: 15,
    rewardWeights: { judge: 0.5, verifier: 0.5 },
    backoffBaseMs: 0,
    ...overrides,
  });
  const { sink, scored, unscored } = recordingSink();
  return {
    deps: { config, client: createJudgeClient(config), sink, sleep: async () => {} },
    scored,
    unscored,
  };
}

describe('scoreAndRecordGroup', () => {
  it('stores every trajectory with both reward components, provenance and its share of the cost', async () => {
    server.enqueue(answerWith((block) => scoreOf(block.messages)));
    const { deps: d, scored, unscored } = deps();
    const outcome = await scoreAndRecordGroup(group, d);
    expect(outcome.status).toBe('scored');
    expect(unscored).toEqual([]);
    expect(scored).toHaveLength(1);
    const { groupId, records, summary } = scored[0]!;
    expect(groupId).toBe('group-42');
    expect(records.map((r) => r.trajectoryId)).toEqual(trajectories.map((t) => t.id));
    // Trajectory 3 (index 3): judge 0.3, verifier 0 → 0.5·0.3 + 0.5·0 = 0.15.
    // Trajectory 4 (index 4): judge 0.4, verifier 1 → 0.5·0.4 + 0.5·1 = 0.7.
    expect(records[3]?.reward).toBeCloseTo(0.15, 12);
    expect(records[4]?.reward).toBeCloseTo(0.7, 12);
    expect(records[4]).toMatchObject({
      judgeScore: 0.4,
      verifierReward: 1,
      weights: { judge: 0.5, verifier: 0.5 },
      judgeModel: 'judge-test',
      orderingScores: [0.4],
    });
    expect(records[4]?.rubricHash).toMatch(/^[0-9a-f]{64}$/);
    expect(records[4]?.explanation).toMatch(/^block \d of 8$/);
    // 1000 prompt tokens over 8 = 125 each; 100 completion tokens = 12·8 + 4 → four 13s and four 12s.
    expect(records.map((r) => r.promptTokens)).toEqual([125, 125, 125, 125, 125, 125, 125, 125]);
    expect(records.map((r) => r.completionTokens)).toEqual([13, 13, 13, 13, 12, 12, 12, 12]);
    // Group cost: (1000·3 + 100·15) / 1e6 = 4500 / 1e6 = 0.0045 USD; each row 0.0045 / 8 = 0.0005625.
    expect(summary.costUsd).toBeCloseTo(0.0045, 12);
    for (const record of records) expect(record.costUsd).toBeCloseTo(0.0005625, 12);
    expect(summary).toMatchObject({ noSignal: false, cached: false, calls: 1 });
  });

  it('records a cache hit with the same scores but zero tokens and cost, so spend is never counted twice', async () => {
    server.enqueue(answerWith((block) => scoreOf(block.messages)));
    const { deps: d, scored } = deps();
    const cache = createMemoryRulerCache();
    await scoreAndRecordGroup(group, { ...d, cache });
    await scoreAndRecordGroup(group, { ...d, cache });
    expect(server.requests).toHaveLength(1);
    const [first, second] = scored;
    expect(second?.summary.cached).toBe(true);
    expect(second?.records.map((r) => r.judgeScore)).toEqual(first?.records.map((r) => r.judgeScore));
    expect(
      second?.records.every((r) => r.promptTokens === 0 && r.completionTokens === 0 && r.costUsd === 0),
    ).toBe(true);
  });

  it('marks the group unscored with the reason when the judge keeps failing, and stores no score', async () => {
    server.enqueue(...Array.from({ length: 2 }, () => ({ kind: 'status' as const, status: 502 })));
    const { deps: d, scored, unscored } = deps({ maxRetries: 1 });
    const outcome = await scoreAndRecordGroup(group, d);
    expect(outcome.status).toBe('unscored');
    expect(scored).toEqual([]);
    expect(unscored).toHaveLength(1);
    expect(unscored[0]?.groupId).toBe('group-42');
    expect(unscored[0]?.reason).toBe('judge failed after 2 attempt(s): http: HTTP 502: status 502');
    expect(unscored[0]?.detail).toMatchObject({ code: 'http', attempts: 2, judgeModel: 'judge-test' });
  });

  it('marks the group unscored when a weighted verifier reward is missing, instead of inventing one', async () => {
    server.enqueue(answerWith((block) => scoreOf(block.messages)));
    const { deps: d, scored, unscored } = deps();
    const first = trajectories[0]?.id as string;
    const { [first]: _dropped, ...partial } = verifierRewards;
    const outcome = await scoreAndRecordGroup({ ...group, verifierRewards: partial }, d);
    expect(outcome.status).toBe('unscored');
    expect(scored).toEqual([]);
    expect(unscored[0]?.reason).toBe(
      `cannot combine rewards: ${first}: verifier reward is missing but weighted 0.5`,
    );
    expect(unscored[0]?.detail.code).toBe('reward-combination');
  });
});

describe('apportion', () => {
  it('splits a total into near-equal integer shares that add up', () => {
    expect(apportion(10, 4)).toEqual([3, 3, 2, 2]); // 10 = 2·4 + 2
    expect(apportion(3, 5)).toEqual([1, 1, 1, 0, 0]);
    expect(apportion(0, 3)).toEqual([0, 0, 0]);
  });
});
