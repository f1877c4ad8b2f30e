// Ingesting whole recorded episodes: the rows and counters they produce, exact token ids and logprobs,
// idempotent retries on the key (and conflicts under it, with nothing of the call written), text
// Postgres cannot hold kept escaped, refusals naming the field, and task / policy version linkage.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError, type StoreError } from '../../db/errors.ts';
import type { IngestEpisodeInput, Store } from '../../db/store.ts';
import { uniqueName } from '../support/fixtures.ts';
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

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isStoreError(error)) throw new Error(`expected a StoreError, got ${String(error)}`);
  return error;
}

async function countWhere(table: 'trajectories' | 'turns', where: string, params: unknown[]) {
  const result = await store.sql.query(`select count(*) from ${table} where ${where}`, params);
  return Number(result.rows[0]?.[0]);
}

/** A tool-using episode: system, user, an assistant call with tokens, the tool's answer, the final reply. */
function episode(key: string | undefined, overrides: Partial<IngestEpisodeInput> = {}): IngestEpisodeInput {
  return {
    ...(key !== undefined ? { key } : {}),
    env: 'recorded',
    verifierReward: 0.75,
    metadata: { source: 'test' },
    tools: [{ type: 'function', function: { name: 'search', parameters: { type: 'object' } } }],
    turns: [
      { role: 'system', content: 'You answer questions.' },
      { role: 'user', content: 'Where is Lyon?' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'call-1', type: 'function', function: { name: 'search', arguments: '{"q":"Lyon"}' } },
        ],
        completionTokenIds: [101, 2 ** 31 - 1, 0],
        completionLogprobs: [-0.0123456789012345, -1.5e-7, -12.000000000000002],
        promptTokenCount: 30,
        latencyMs: 12.25,
      },
      { role: 'tool', content: 'Lyon is in France.', toolCallId: 'call-1', metadata: { toolName: 'search' } },
      { role: 'assistant', content: 'France.', completionTokenIds: [7], promptTokenCount: 45, latencyMs: 3 },
    ],
    ...overrides,
  };
}

describe('ingestTrajectories', () => {
  it('stores each episode with its turns, counters, outcome and exact tokens, in the order given', async () => {
    const keys = [uniqueName('a'), uniqueName('b')];
    const result = await store.ingestTrajectories({
      episodes: [episode(keys[0]), episode(keys[1], { status: 'truncated', errorReason: 'max-turns' })],
    });
    expect(result.createdTrajectories).toBe(2);
    expect(result.createdTurns).toBe(10);
    expect(result.trajectories.map((item) => [item.key, item.created, item.turnCount])).toEqual([
      [keys[0], true, 5],
      [keys[1], true, 5],
    ]);
    const [first, second] = result.trajectories;
    const { trajectory, turns } = await store.getTrajectory(first?.trajectoryId as string);
    // Counters: 5 turns; prompt tokens 30 + 45 = 75; completion tokens 3 + 1 = 4; latency 12.25 + 3 ms.
    expect(trajectory).toMatchObject({
      env: 'recorded',
      status: 'finished',
      verifierReward: 0.75,
      ingestKey: keys[0],
      turnCount: 5,
      promptTokenCount: 75,
      completionTokenCount: 4,
      latencyMs: 15.25,
      metadata: { source: 'test' },
      tools: [{ type: 'function', function: { name: 'search', parameters: { type: 'object' } } }],
    });
    expect(trajectory.finishedAt).toBeInstanceOf(Date);
    expect(turns.map((turn) => [turn.index, turn.role])).toEqual([
      [0, 'system'],
      [1, 'user'],
      [2, 'assistant'],
      [3, 'tool'],
      [4, 'assistant'],
    ]);
    expect(turns[2]?.completionTokenIds).toEqual([101, 2 ** 31 - 1, 0]);
    // Exact equality: every bit of each float64 survives JSON text and double precision.
    expect(turns[2]?.completionLogprobs).toEqual([-0.0123456789012345, -1.5e-7, -12.000000000000002]);
    expect(turns[2]?.toolCalls?.[0]?.function.arguments).toBe('{"q":"Lyon"}');
    expect(turns[3]).toMatchObject({ toolCallId: 'call-1', metadata: { toolName: 'search' } });
    // Absent fields are SQL NULL, not a JSON null inside a jsonb column.
    expect(
      await countWhere('turns', 'trajectory_id = $1 and tool_calls is null and metadata is null', [
        trajectory.id,
      ]),
    ).toBe(3);
    const truncated = await store.getTrajectory(second?.trajectoryId as string);
    expect(truncated.trajectory).toMatchObject({ status: 'truncated', errorReason: 'max-turns' });
  });

  it('treats a retried upload as a no-op, even with metadata keys in another order', async () => {
    const key = uniqueName('retry');
    const original = episode(key, { metadata: { a: 1, b: [1, 2] } });
    const first = await store.ingestTrajectories({ episodes: [original] });
    const retry = await store.ingestTrajectories({
      episodes: [{ ...original, metadata: { b: [1, 2], a: 1 } }],
    });
    expect(retry.trajectories[0]).toEqual({ ...first.trajectories[0], created: false });
    expect(retry).toMatchObject({ createdTrajectories: 0, createdTurns: 0 });
    expect(await countWhere('trajectories', 'ingest_key = $1', [key])).toBe(1);
    expect(await countWhere('turns', 'trajectory_id = $1', [first.trajectories[0]?.trajectoryId])).toBe(5);
  });

  it('refuses another episode under a stored key, naming what differs, and writes nothing of the call', async () => {
    const key = uniqueName('taken');
    await store.ingestTrajectories({ episodes: [episode(key)] });
    const bystander = uniqueName('bystander');
    const changed = episode(key);
    const turns = [...(changed.turns ?? [])];
    turns[2] = {
      ...(turns[2] as object),
      completionLogprobs: [-0.0123456789012346, -1.5e-7, -12.000000000000002],
    } as never;
    const error = await rejection(
      store.ingestTrajectories({ episodes: [episode(bystander), { ...changed, turns }] }),
    );
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('episodes.1.key');
    expect(error.message).toContain('turn 2 completionLogprobs');
    expect(await countWhere('trajectories', 'ingest_key = $1', [bystander])).toBe(0);
    const fewerTurns = await rejection(
      store.ingestTrajectories({
        episodes: [{ ...episode(key), turns: episode(key).turns?.slice(0, 4) ?? [] }],
      }),
    );
    expect(fewerTurns).toMatchObject({ code: 'conflict' });
    expect(fewerTurns.message).toContain('turnCount');
  });

  it('stores an episode repeated within one call once, and refuses two different ones under one key', async () => {
    const key = uniqueName('twice');
    const result = await store.ingestTrajectories({ episodes: [episode(key), episode(key)] });
    expect(result.trajectories.map((item) => item.created)).toEqual([true, false]);
    expect(result.trajectories[1]?.trajectoryId).toBe(result.trajectories[0]?.trajectoryId);
    expect(await countWhere('trajectories', 'ingest_key = $1', [key])).toBe(1);
    const other = uniqueName('twice');
    const error = await rejection(
      store.ingestTrajectories({ episodes: [episode(other), episode(other, { verifierReward: 0 })] }),
    );
    expect(error).toMatchObject({ code: 'conflict' });
    expect(error.issues[0]?.path).toEqual(['episodes', 1, 'key']);
    expect(await countWhere('trajectories', 'ingest_key = $1', [other])).toBe(0);
  });

  it('stores a new trajectory for each upload without a key', async () => {
    const first = await store.ingestTrajectories({ episodes: [episode(undefined)] });
    const second = await store.ingestTrajectories({ episodes: [episode(undefined)] });
    expect(second.trajectories[0]?.trajectoryId).not.toBe(first.trajectories[0]?.trajectoryId);
    expect(second.trajectories[0]?.key).toBeNull();
  });

  it('keeps text Postgres cannot hold in turns and tools, escaped, and gives it back as written', async () => {
    const nul = 'a\u0000b';
    const lone = 'x\uD800y';
    const result = await store.ingestTrajectories({
      episodes: [
        episode(uniqueName('text'), {
          tools: [{ type: 'function', function: { name: 'search', description: lone } }],
          turns: [
            { role: 'user', content: `back\\slash ${nul}` },
            {
              role: 'assistant',
              content: lone,
              // The result answers this call (protocol/validate-turns.ts): both ids hold the lone surrogate.
              toolCalls: [{ id: lone, type: 'function', function: { name: 's', arguments: nul } }],
              metadata: { [nul]: lone },
            },
            { role: 'tool', content: 'ok', toolCallId: lone },
          ],
        }),
      ],
    });
    const id = result.trajectories[0]?.trajectoryId as string;
    const { trajectory, turns } = await store.getTrajectory(id);
    expect(trajectory.tools?.[0]?.function.description).toBe(lone);
    expect(trajectory.textEncoding).toBe('escaped');
    expect(turns.map((turn) => turn.content)).toEqual([`back\\slash ${nul}`, lone, 'ok']);
    expect(turns[1]?.toolCalls?.[0]?.function.arguments).toBe(nul);
    expect(turns[1]?.metadata).toEqual({ [nul]: lone });
    expect(turns[2]?.toolCallId).toBe(lone);
    expect(turns.map((turn) => turn.textEncoding)).toEqual(['escaped', 'escaped', 'escaped']);
    // The retry of an escaped episode compares equal.
    const retry = await store.ingestTrajectories({
      episodes: [{ ...episode(result.trajectories[0]?.key ?? ''), ...(await reread(id)) }],
    });
    expect(retry.trajectories[0]?.created).toBe(false);
  });

  it('refuses invalid input naming the field, and writes nothing', async () => {
    const key = uniqueName('bad');
    const cases: [unknown, (string | number)[]][] = [
      [{ episodes: [] }, ['episodes']],
      [{ episodes: [episode(key)], extra: 1 }, []],
      [{ episodes: [episode(key, { env: undefined })] }, ['episodes', 0, 'env']],
      [{ episodes: [episode(key, { turns: [] })] }, ['episodes', 0, 'turns']],
      [{ episodes: [episode(key, { status: 'error' })] }, ['episodes', 0, 'errorReason']],
      [{ episodes: [episode(key, { metadata: { note: 'a\u0000' } })] }, ['episodes', 0, 'metadata', 'note']],
      [{ episodes: [episode(key, { verifierReward: Number.NaN })] }, ['episodes', 0, 'verifierReward']],
      [
        {
          episodes: [
            episode(key),
            episode(uniqueName('bad'), {
              turns: [{ role: 'assistant', content: 'x', completionTokenIds: [1], completionLogprobs: [] }],
            }),
          ],
        },
        ['episodes', 1, 'turns', 0, 'completionLogprobs'],
      ],
      [
        { episodes: [episode(key, { turns: [{ role: 'user', content: 'x', index: 3 }] as never })] },
        ['episodes', 0, 'turns', 0, 'index'],
      ],
      [
        { episodes: [episode(key, { turns: [{ role: 'user', content: 'x', tool_calls: [] }] as never })] },
        ['episodes', 0, 'turns', 0, 'tool_calls'],
      ],
      [
        { episodes: [episode(key, { turns: [{ role: 'tool', content: 'x' }] })] },
        ['episodes', 0, 'turns', 0, 'toolCallId'],
      ],
      [
        {
          episodes: [
            episode(key, { turns: [{ role: 'assistant', content: 'x', completionTokenIds: [2 ** 31] }] }),
          ],
        },
        ['episodes', 0, 'turns', 0, 'completionTokenIds', 0],
      ],
    ];
    for (const [input, path] of cases) {
      const error = await rejection(store.ingestTrajectories(input as never));
      expect(error.code, JSON.stringify(path)).toBe('validation');
      if (path.length > 0) expect(error.issues.map((issue) => issue.path)).toContainEqual(path);
    }
    expect(await countWhere('trajectories', 'ingest_key = $1', [key])).toBe(0);
  });

  it('links a task (taking its env) and a policy version, and refuses ones that do not exist', async () => {
    const task = await store.upsertTask({ env: 'task-env', key: uniqueName('task'), input: { q: 1 } });
    const policy = await store.createPolicy({ name: uniqueName('policy'), baseModel: 'tiny' });
    const version = await store.registerPolicyVersion({ policyId: policy.id });
    const result = await store.ingestTrajectories({
      episodes: [
        episode(uniqueName('linked'), { env: undefined, taskId: task.id, policyVersionId: version.id }),
      ],
    });
    const { trajectory } = await store.getTrajectory(result.trajectories[0]?.trajectoryId as string);
    expect(trajectory).toMatchObject({ env: 'task-env', taskId: task.id, policyVersionId: version.id });
    const missingTask = await rejection(
      store.ingestTrajectories({ episodes: [episode(uniqueName('x'), { taskId: randomUUID() })] }),
    );
    expect(missingTask).toMatchObject({ code: 'not-found' });
    expect(missingTask.issues[0]?.path).toEqual(['episodes', 0, 'taskId']);
    const missingVersion = await rejection(
      store.ingestTrajectories({ episodes: [episode(uniqueName('x'), { policyVersionId: randomUUID() })] }),
    );
    expect(missingVersion.issues[0]?.path).toEqual(['episodes', 0, 'policyVersionId']);
    const wrongEnv = await rejection(
      store.ingestTrajectories({ episodes: [episode(uniqueName('x'), { env: 'other', taskId: task.id })] }),
    );
    expect(wrongEnv).toMatchObject({ code: 'validation' });
    expect(wrongEnv.issues[0]?.path).toEqual(['episodes', 0, 'env']);
  });

  it('stores one trajectory when the same upload arrives twice at once', async () => {
    const key = uniqueName('race');
    const results = await Promise.all([
      store.ingestTrajectories({ episodes: [episode(key)] }),
      store.ingestTrajectories({ episodes: [episode(key)] }),
    ]);
    expect(results.map((result) => result.trajectories[0]?.created).sort()).toEqual([false, true]);
    expect(await countWhere('trajectories', 'ingest_key = $1', [key])).toBe(1);
  });
});

/** An ingested trajectory's tools and turns read back, as the episode fields that would re-upload them. */
async function reread(id: string): Promise<Partial<IngestEpisodeInput>> {
  const { trajectory, turns } = await store.getTrajectory(id);
  return {
    ...(trajectory.tools ? { tools: trajectory.tools } : {}),
    turns: turns.map((turn) => ({
      role: turn.role,
      content: turn.content,
      ...(turn.toolCalls ? { toolCalls: turn.toolCalls } : {}),
      ...(turn.toolCallId ? { toolCallId: turn.toolCallId } : {}),
      ...(turn.metadata ? { metadata: turn.metadata } : {}),
    })),
  };
}
