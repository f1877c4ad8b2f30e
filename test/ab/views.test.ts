// The analysis views (migration 0004) on known data, each aggregate beside its arithmetic, and the
// read-only analyst role (migration 0005). Runs on PGlite, and on a server database with
// EDGERL_TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../protocol/chat.ts';
import type { Store } from '../../db/store.ts';
import { uniqueName } from '../support/fixtures.ts';
import { openTestStore, type TestStore, testServerUrl } from '../support/open-test-store.ts';

let testStore: TestStore;
let store: Store;
let env: string;
let policyName: string;
const ids: Record<'t1' | 't2' | 't3' | 't4' | 't5', string> = { t1: '', t2: '', t3: '', t4: '', t5: '' };

function call(id: string, name: string, args = '{}'): ToolCall {
  return { id, type: 'function', function: { name, arguments: args } };
}

/**
 * One environment, one policy with versions @0 and @1:
 * - t1 (@0) finished, verifier 1, final 0.9, judge 0.8: query(c1) ok; then lookup(c1) — the same call
 *   id again, in a later turn — fails invalid-arguments, lookup(c2) ok. Tokens 100 + 20.
 * - t2 (@0) truncated, verifier 0, judge 0.6: lookup(c1) times out. Tokens 50 + 10.
 * - t3 (@0) error, no reward, one user turn. t4 (@0) still running, tokens 30 + 5.
 * - t5 (@1) finished, verifier 1, judge 0.3, no turns.
 */
beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
  env = uniqueName('env');
  const policy = await store.createPolicy({ name: uniqueName('agent'), baseModel: 'tiny-qwen' });
  policyName = policy.name;
  const v0 = await store.registerPolicyVersion({ policyId: policy.id });
  const v1 = await store.registerPolicyVersion({ policyId: policy.id });
  const start = (versionId: string) => store.startTrajectory({ env, policyVersionId: versionId });
  ids.t1 = (await start(v0.id)).id;
  ids.t2 = (await start(v0.id)).id;
  ids.t3 = (await start(v0.id)).id;
  ids.t4 = (await start(v0.id)).id;
  ids.t5 = (await start(v1.id)).id;

  const t1 = ids.t1;
  await store.appendTurn({ trajectoryId: t1, index: 0, role: 'system', content: 'Use the tools.' });
  await store.appendTurn({ trajectoryId: t1, index: 1, role: 'user', content: 'Find it.' });
  await store.appendTurn({
    trajectoryId: t1,
    index: 2,
    role: 'assistant',
    content: '',
    toolCalls: [call('c1', 'query')],
  });
  await store.appendTurn({ trajectoryId: t1, index: 3, role: 'tool', content: '3 rows', toolCallId: 'c1' });
  await store.appendTurn({
    trajectoryId: t1,
    index: 4,
    role: 'assistant',
    content: '',
    toolCalls: [call('c1', 'lookup', '{"k":1}'), call('c2', 'lookup', '{"key":"a"}')],
  });
  await store.appendTurn({
    trajectoryId: t1,
    index: 5,
    role: 'tool',
    content: '{"error":"invalid arguments"}',
    toolCallId: 'c1',
    toolError: 'invalid-arguments',
  });
  await store.appendTurn({ trajectoryId: t1, index: 6, role: 'tool', content: 'value 7', toolCallId: 'c2' });
  await store.appendTurn({ trajectoryId: t1, index: 7, role: 'assistant', content: '7' });
  await store.finishTrajectory({ trajectoryId: t1, status: 'finished', verifierReward: 1 });
  await store.setFinalRewards({ rewards: [{ trajectoryId: t1, finalReward: 0.9 }] });

  const t2 = ids.t2;
  await store.appendTurn({ trajectoryId: t2, index: 0, role: 'user', content: 'Find it.' });
  await store.appendTurn({
    trajectoryId: t2,
    index: 1,
    role: 'assistant',
    content: '',
    toolCalls: [call('c1', 'lookup')],
  });
  await store.appendTurn({
    trajectoryId: t2,
    index: 2,
    role: 'tool',
    content: '{"error":"timeout"}',
    toolCallId: 'c1',
    toolError: 'tool-timeout',
  });
  await store.finishTrajectory({
    trajectoryId: t2,
    status: 'truncated',
    verifierReward: 0,
    errorReason: 'max-turns',
  });

  await store.appendTurn({ trajectoryId: ids.t3, index: 0, role: 'user', content: 'Find it.' });
  await store.finishTrajectory({ trajectoryId: ids.t3, status: 'error', errorReason: 'policy-down' });
  await store.appendTurn({ trajectoryId: ids.t4, index: 0, role: 'user', content: 'Find it.' });
  await store.finishTrajectory({ trajectoryId: ids.t5, status: 'finished', verifierReward: 1 });

  for (const [id, judge, prompt, completion] of [
    [ids.t1, 0.8, 100, 20],
    [ids.t2, 0.6, 50, 10],
    [ids.t3, null, 0, 0],
    [ids.t4, null, 30, 5],
    [ids.t5, 0.3, 0, 0],
  ] as const) {
    await store.sql.query(
      'update trajectories set judge_score = $2, prompt_token_count = $3, completion_token_count = $4 where id = $1',
      [id, judge, prompt, completion],
    );
  }
  // Judge rows: j1 judged t1 twice (0.8, then 0.7: the later one counts), t2 and t5; j2 judged t1 once.
  for (const [id, model, score, minutes] of [
    [ids.t1, 'j1', 0.8, 0],
    [ids.t1, 'j1', 0.7, 5],
    [ids.t2, 'j1', 0.6, 0],
    [ids.t5, 'j1', 0.3, 0],
    [ids.t1, 'j2', 0.1, 0],
  ] as const) {
    await store.sql.query(
      `insert into judge_scores (trajectory_id, judge_model, rubric_hash, score, prompt_tokens, completion_tokens, cost_usd, created_at)
       values ($1, $2, 'r1', $3, 1000, 10, 0.01, timestamptz '2026-01-01 00:00:00+00' + make_interval(mins => $4))`,
      [id, model, score, minutes],
    );
  }
});
afterAll(async () => {
  await testStore?.close();
});

async function rows(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const result = await store.sql.query(sql, params);
  return result.rows.map((row) =>
    Object.fromEntries(result.columns.map((column, index) => [column, row[index]])),
  );
}

describe('worst_trajectories', () => {
  it('ranks a version’s ended trajectories by reward, unrewarded last, with their transcript', async () => {
    const ranked = await rows(
      'select worst_rank, trajectory_id, status, reward, error_reason, transcript from worst_trajectories where adapter_name = $1 order by worst_rank',
      [`${policyName}@0`],
    );
    // t2 (reward 0) < t1 (final 0.9) < t3 (no reward); t4 is still running.
    expect(ranked.map((row) => [row.worst_rank, row.trajectory_id, row.reward])).toEqual([
      [1, ids.t2, 0],
      [2, ids.t1, 0.9],
      [3, ids.t3, null],
    ]);
    expect(ranked[0]?.transcript).toBe(
      ['[0] user: Find it.', '[1] assistant: lookup({})', '[2] tool: {"error":"timeout"}'].join('\n'),
    );
    expect(ranked[2]).toMatchObject({ status: 'error', error_reason: 'policy-down' });
  });
});

describe('reward_by_version_daily', () => {
  it('gives each version’s daily reward mean and spread, and its error and truncation rates', async () => {
    const [today] = await rows(
      'select * from reward_by_version_daily where adapter_name = $1 and day = (now() at time zone $2)::date',
      [`${policyName}@0`, 'UTC'],
    );
    expect(today).toMatchObject({
      policy: policyName,
      version: 0,
      trajectory_count: 3, // t1, t2, t3
      rewarded_count: 2, // 0.9, 0
      verifier_reward_mean: 0.5, // (1 + 0) / 2
    });
    expect(today?.reward_mean).toBeCloseTo(0.45, 12); // (0.9 + 0) / 2
    // sample std: √((0.45² + 0.45²) / (2 − 1)) = 0.6363961030678927
    expect(today?.reward_std).toBeCloseTo(0.6363961030678927, 12);
    expect(today?.judge_score_mean).toBeCloseTo(0.7, 12); // (0.8 + 0.6) / 2
    expect(today?.error_rate).toBeCloseTo(1 / 3, 12);
    expect(today?.truncation_rate).toBeCloseTo(1 / 3, 12);
    expect(String(today?.day)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('tool_error_rates and env_outcome_rates', () => {
  it('names each result by the nearest call with its id and counts errors by code', async () => {
    const tools = await rows('select * from tool_error_rates where env = $1 order by tool', [env]);
    expect(tools).toHaveLength(2);
    expect(tools[0]).toMatchObject({
      tool: 'lookup', // t1's second c1 and c2, t2's c1
      call_count: 3,
      error_count: 2,
      error_codes: { 'invalid-arguments': 1, 'tool-timeout': 1 },
      trajectory_count: 2,
      truncated_trajectory_count: 1,
      truncation_rate: 0.5,
    });
    expect(tools[0]?.error_rate).toBeCloseTo(2 / 3, 12);
    expect(tools[1]).toMatchObject({
      tool: 'query', // t1's first c1: the error on the later c1 is not its
      call_count: 1,
      error_count: 0,
      error_rate: 0,
      error_codes: {},
      truncation_rate: 0,
    });
  });

  it('gives outcome and tool-error rates per environment and version', async () => {
    const outcomes = await rows('select * from env_outcome_rates where env = $1 order by adapter_name', [
      env,
    ]);
    expect(outcomes[0]).toMatchObject({
      adapter_name: `${policyName}@0`,
      trajectory_count: 3,
      finished_count: 1,
      truncated_count: 1,
      error_count: 1,
      tool_call_count: 4, // 3 tool turns in t1, 1 in t2
      tool_error_count: 2,
      tool_error_rate: 0.5,
    });
    expect(outcomes[0]?.truncation_rate).toBeCloseTo(1 / 3, 12);
    expect(outcomes[1]).toMatchObject({
      adapter_name: `${policyName}@1`,
      trajectory_count: 1,
      tool_call_count: 0,
      tool_error_rate: null, // no calls: no rate
    });
  });
});

describe('judge_vs_verifier', () => {
  it('pairs each judge’s latest score with the verifier per environment, judge and rubric', async () => {
    const pairs = await rows('select * from judge_vs_verifier where env = $1 order by judge_model', [env]);
    expect(pairs.map((row) => row.judge_model)).toEqual(['j1', 'j2']);
    const j1 = pairs[0];
    // Pairs (judge, verifier): t1 (0.7, 1), t2 (0.6, 0), t5 (0.3, 1).
    expect(j1).toMatchObject({ rubric_hash: 'r1', pair_count: 3, verified_count: 2 });
    expect(j1?.judge_score_mean).toBeCloseTo(1.6 / 3, 12);
    expect(j1?.verifier_reward_mean).toBeCloseTo(2 / 3, 12);
    // Pearson r, numpy.corrcoef([0.7, 0.6, 0.3], [1, 0, 1])[0, 1] = −0.2773500981126145
    expect(j1?.correlation).toBeCloseTo(-0.2773500981126145, 10);
    expect(j1?.judge_score_mean_verified).toBeCloseTo(0.5, 12); // (0.7 + 0.3) / 2
    expect(j1?.judge_score_mean_not_verified).toBeCloseTo(0.6, 12);
    // Agreement at 0.5: t1 yes (0.7 ≥ 0.5, verified); t2 no (0.6 ≥ 0.5, not verified); t5 no.
    expect(j1?.agreement_rate).toBeCloseTo(1 / 3, 12);
    expect(pairs[1]).toMatchObject({ pair_count: 1, correlation: null }); // one pair: r undefined
  });
});

describe('token_usage_by_version', () => {
  it('sums the policy’s tokens, running trajectories included, and what judging them cost', async () => {
    const [usage] = await rows('select * from token_usage_by_version where adapter_name = $1', [
      `${policyName}@0`,
    ]);
    expect(usage).toMatchObject({
      policy: policyName,
      trajectory_count: 4,
      turn_count: 13, // 8 + 3 + 1 + 1
      prompt_tokens: 180, // 100 + 50 + 0 + 30
      completion_tokens: 35, // 20 + 10 + 0 + 5
      total_tokens: 215,
      prompt_tokens_per_trajectory: 45, // 180 / 4
      completion_tokens_per_trajectory: 8.75, // 35 / 4
      judge_score_count: 4, // t1 × 3, t2 × 1
      judge_prompt_tokens: 4000,
      judge_completion_tokens: 40,
    });
    expect(usage?.judge_cost_usd).toBeCloseTo(0.04, 12);
  });
});

/** Runs `statement` as edgerl_analyst in a transaction of its own (SET LOCAL ROLE ends with it). */
function asAnalyst(statement: string) {
  return store.sql.transaction(async (session) => {
    await session.query('set local role edgerl_analyst');
    return session.query(statement);
  });
}

const analystChecks = () => {
  it('can read tables and views', async () => {
    expect((await asAnalyst('select count(*) from trajectories')).rows[0]?.[0]).toBeGreaterThanOrEqual(5);
    expect((await asAnalyst('select count(*) from worst_trajectories')).rows[0]?.[0]).toBeGreaterThanOrEqual(
      4,
    );
  });

  it('can insert, update, delete and create nothing', async () => {
    for (const statement of [
      `insert into tasks (env, key, input) values ('e', 'k', '{}')`,
      `update trajectories set final_reward = 1`,
      `delete from turns`,
      `update policies set name = 'x'`,
      `create table public.scratch (a int)`,
    ]) {
      await expect(asAnalyst(statement), statement).rejects.toThrow(/permission denied/);
    }
  });
};

// PGlite is a full Postgres in one process: SET ROLE and privilege checks behave as on a server. The
// embedded store itself always connects as the superuser `postgres`, so the role matters on servers.
describe('edgerl_analyst on this store', analystChecks);

// Roles are server-wide objects, so the role's grants, default privileges included, are checked on a
// real server as well; the default PGlite run has no second database to check them against.
describe.runIf(testServerUrl)('edgerl_analyst on a PostgreSQL server', () => {
  it('is a role without login, and reads tables created after the migration (default privileges)', async () => {
    const [role] = await rows("select rolcanlogin, rolsuper from pg_roles where rolname = 'edgerl_analyst'");
    expect(role).toEqual({ rolcanlogin: false, rolsuper: false });
    await store.sql.query('create table later_table (a int)');
    await store.sql.query('insert into later_table values (1)');
    expect((await asAnalyst('select a from later_table')).rows).toEqual([[1]]);
    await expect(asAnalyst('insert into later_table values (2)')).rejects.toThrow(/permission denied/);
  });
});
