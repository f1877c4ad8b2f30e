// The SQL views on known data: each aggregate compared with the arithmetic written beside it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import { assistantTurn, makeGroup, uniqueName, userTurn } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
let store: Store;

beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
});
afterAll(async () => {
  await testStore?.close();
});

/** One row of a view as an object, keyed by column name. */
async function viewRow(sql: string, params: unknown[]): Promise<Record<string, unknown>> {
  const result = await store.sql.query(sql, params);
  const [row] = result.rows;
  if (!row) throw new Error(`no row for ${sql}`);
  return Object.fromEntries(result.columns.map((column, index) => [column, row[index]]));
}

describe('group_summaries', () => {
  it('counts trajectories by status and gives reward mean and population std', async () => {
    const { group, trajectories } = await makeGroup(store, { size: 4 });
    const ids = trajectories.map((trajectory) => trajectory.id) as [string, string, string, string];
    await store.finishTrajectory({ trajectoryId: ids[0], status: 'finished', verifierReward: 1 });
    await store.finishTrajectory({ trajectoryId: ids[1], status: 'finished', verifierReward: 0 });
    await store.finishTrajectory({ trajectoryId: ids[2], status: 'truncated', errorReason: 'max-turns' });
    await store.finishTrajectory({ trajectoryId: ids[3], status: 'error', errorReason: 'policy-down' });
    await store.setFinalRewards({
      rewards: [
        { trajectoryId: ids[0], finalReward: 1 },
        { trajectoryId: ids[1], finalReward: 0 },
        { trajectoryId: ids[2], finalReward: 0.5 },
        { trajectoryId: ids[3], finalReward: 0.5 },
      ],
    });
    const row = await viewRow('select * from group_summaries where group_id = $1', [group.id]);
    expect(row).toMatchObject({
      status: 'complete',
      size: 4,
      trajectory_count: 4,
      running_count: 0,
      finished_count: 2,
      truncated_count: 1,
      error_count: 1,
      rewarded_count: 4,
      reward_min: 0,
      reward_max: 1,
      verifier_reward_mean: 0.5, // (1 + 0) / 2; the other two have no verifier reward
    });
    // mean = (1 + 0 + 0.5 + 0.5) / 4 = 0.5
    expect(row.reward_mean).toBeCloseTo(0.5, 12);
    // population std = sqrt((0.5² + 0.5² + 0² + 0²) / 4) = sqrt(0.125) = 0.3535533905932738
    expect(row.reward_std).toBeCloseTo(0.3535533905932738, 12);
  });
});

describe('trajectory_summaries and turn_log', () => {
  it('summarises a trajectory and renders its turns as readable lines', async () => {
    const policy = await store.createPolicy({ name: uniqueName('agent'), baseModel: 'tiny-qwen' });
    const version = await store.registerPolicyVersion({ policyId: policy.id });
    const { trajectories } = await makeGroup(store, {
      size: 1,
      policyVersionId: version.id,
      env: 'calculator',
    });
    const id = trajectories[0]?.id ?? '';
    const calls = [
      { id: 'c1', type: 'function' as const, function: { name: 'add', arguments: '{"a":2,"b":2}' } },
      { id: 'c2', type: 'function' as const, function: { name: 'mul', arguments: '{"a":3}' } },
    ];
    await store.appendTurn({ trajectoryId: id, index: 0, role: 'system', content: 'Use the tools.' });
    await store.appendTurn(userTurn(id, 1));
    await store.appendTurn(
      assistantTurn(id, 2, { content: 'Let me add.', toolCalls: calls, promptTokenCount: 30 }),
    );
    await store.appendTurn({ trajectoryId: id, index: 3, role: 'tool', content: '4', toolCallId: 'c1' });
    await store.appendTurn({
      trajectoryId: id,
      index: 4,
      role: 'tool',
      content: 'bad args',
      toolCallId: 'c2',
      toolError: 'invalid-arguments',
    });
    await store.appendTurn(
      assistantTurn(id, 5, {
        content: '4',
        completionTokenIds: [19, 151645, 7],
        completionLogprobs: [-1, -2, -3],
        promptTokenCount: 50,
        latencyMs: 10,
      }),
    );
    await store.finishTrajectory({ trajectoryId: id, status: 'finished', verifierReward: 1 });

    const summary = await viewRow('select * from trajectory_summaries where trajectory_id = $1', [id]);
    expect(summary).toMatchObject({
      env: 'calculator',
      policy: policy.name,
      adapter_name: `${policy.name}@0`,
      status: 'finished',
      verifier_reward: 1,
      turn_count: 6,
      tool_call_count: 2,
      tool_error_count: 1,
      prompt_token_count: 80, // 30 + 50
      completion_token_count: 5, // 2 + 3
      latency_ms: 45.5, // 35.5 + 10
    });
    expect(summary.duration_ms).toBeGreaterThanOrEqual(0);

    const log = await store.sql.query(
      'select index, role, text, tool_error, completion_tokens from turn_log where trajectory_id = $1 order by index',
      [id],
    );
    expect(log.rows).toEqual([
      [0, 'system', 'Use the tools.', null, null],
      [1, 'user', 'What is 2 + 2?', null, null],
      [2, 'assistant', 'Let me add. add({"a":2,"b":2}) mul({"a":3})', null, 2],
      [3, 'tool', '4', null, null],
      [4, 'tool', 'bad args', 'invalid-arguments', null],
      [5, 'assistant', '4', null, 3],
    ]);
  });
});

describe('experiment_arm_stats', () => {
  it('gives each arm its traffic and reward mean, sample std and standard error', async () => {
    const policy = await store.createPolicy({ name: uniqueName('ab'), baseModel: 'tiny-qwen' });
    const base = await store.registerPolicyVersion({ policyId: policy.id });
    const candidate = await store.registerPolicyVersion({ policyId: policy.id });
    await store.publishPolicyVersion({ versionId: base.id });
    await store.publishPolicyVersion({ versionId: candidate.id });
    const { experiment, arms } = await store.createExperiment({
      name: uniqueName('exp'),
      arms: [
        { name: 'control', policyVersionId: base.id, weight: 0.8 },
        { name: 'candidate', policyVersionId: candidate.id, weight: 0.2 },
      ],
    });
    const armId = (armName: string) => arms.find((arm) => arm.name === armName)?.id ?? '';
    const episodes: [string, 'finished' | 'error', number][] = [
      ['control', 'finished', 1],
      ['control', 'finished', 0],
      ['control', 'error', 1],
      ['candidate', 'finished', 0.5],
    ];
    for (const [armName, status, reward] of episodes) {
      const trajectory = await store.startTrajectory({
        env: 'chat',
        experimentArmId: armId(armName),
        stickinessKey: 'user-1',
      });
      await store.finishTrajectory({
        trajectoryId: trajectory.id,
        status,
        errorReason: status === 'error' ? 'boom' : undefined,
      });
      await store.setFinalRewards({ rewards: [{ trajectoryId: trajectory.id, finalReward: reward }] });
    }
    const control = await viewRow(
      'select * from experiment_arm_stats where experiment_id = $1 and arm = $2',
      [experiment.id, 'control'],
    );
    expect(control).toMatchObject({
      weight: 0.8,
      trajectory_count: 3,
      finished_count: 2,
      error_count: 1,
      rewarded_count: 3,
    });
    // mean = (1 + 0 + 1) / 3 = 2/3
    expect(control.reward_mean).toBeCloseTo(2 / 3, 12);
    // sample std = sqrt(((1/3)² + (2/3)² + (1/3)²) / (3 - 1)) = sqrt(1/3) = 0.5773502691896257
    expect(control.reward_std).toBeCloseTo(0.5773502691896257, 12);
    // standard error = std / sqrt(3) = 1/3
    expect(control.reward_stderr).toBeCloseTo(1 / 3, 12);
    const single = await viewRow('select * from experiment_arm_stats where experiment_id = $1 and arm = $2', [
      experiment.id,
      'candidate',
    ]);
    // One reward: mean 0.5; the sample std of one value is undefined (null), and so is its standard error.
    expect(single).toMatchObject({
      trajectory_count: 1,
      reward_mean: 0.5,
      reward_std: null,
      reward_stderr: null,
    });
  });
});
