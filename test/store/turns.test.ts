// Appending turns: idempotent retries, conflicting retries, gaps, appends after finish, bad payloads
// (field named, nothing written), and concurrent appends of the same turn.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError, type StoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { assistantTurn, makeGroup, userTurn } from '../support/fixtures.ts';
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

async function startOne(): Promise<string> {
  const { trajectories } = await makeGroup(store, { size: 1 });
  const [trajectory] = trajectories;
  if (!trajectory) throw new Error('no trajectory');
  return trajectory.id;
}

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isStoreError(error)) throw new Error(`expected a StoreError, got ${String(error)}`);
  return error;
}

async function turnRowCount(trajectoryId: string): Promise<number> {
  const result = await store.sql.query('select count(*) from turns where trajectory_id = $1', [trajectoryId]);
  return Number(result.rows[0]?.[0]);
}

describe('appendTurn', () => {
  it('stores turns in order and keeps token ids and logprobs exactly', async () => {
    const id = await startOne();
    await store.appendTurn(userTurn(id, 0));
    const first = await store.appendTurn(assistantTurn(id, 1));
    expect(first).toEqual({ trajectoryId: id, index: 1, created: true });
    const { trajectory, turns } = await store.getTrajectory(id);
    expect(turns.map((turn) => turn.index)).toEqual([0, 1]);
    expect(turns[1]?.completionTokenIds).toEqual([19, 151645]);
    // Exact equality: double precision keeps every bit of a float64 (real would round to float32).
    expect(turns[1]?.completionLogprobs).toEqual([-0.0123456789012345, -1.5e-7]);
    // Counters: 2 turns; prompt tokens 21 (one assistant turn); 2 completion tokens; latency 35.5 ms.
    expect(trajectory).toMatchObject({
      turnCount: 2,
      promptTokenCount: 21,
      completionTokenCount: 2,
      latencyMs: 35.5,
    });
  });

  it('treats a retried identical append as a no-op, even with metadata keys in another order', async () => {
    const id = await startOne();
    await store.appendTurn(assistantTurn(id, 0, { metadata: { a: 1, b: [1, 2] } }));
    const retry = await store.appendTurn(assistantTurn(id, 0, { metadata: { b: [1, 2], a: 1 } }));
    expect(retry.created).toBe(false);
    expect(await turnRowCount(id)).toBe(1);
    const { trajectory } = await store.getTrajectory(id);
    // The retry did not count twice: still one turn and 2 completion tokens.
    expect(trajectory).toMatchObject({ turnCount: 1, completionTokenCount: 2 });
  });

  it('rejects a conflicting append at a stored index, naming the field that differs', async () => {
    const id = await startOne();
    await store.appendTurn(assistantTurn(id, 0));
    const changedLogprob = await rejection(
      store.appendTurn(assistantTurn(id, 0, { completionLogprobs: [-0.0123456789012346, -1.5e-7] })),
    );
    expect(changedLogprob.code).toBe('conflict');
    expect(changedLogprob.message).toContain('completionLogprobs');
    const changedRole = await rejection(store.appendTurn(userTurn(id, 0, '4')));
    expect(changedRole.code).toBe('conflict');
    expect(changedRole.message).toContain('role');
    const { turns } = await store.getTrajectory(id);
    expect(turns[0]?.completionLogprobs).toEqual([-0.0123456789012345, -1.5e-7]);
  });

  it('rejects an index that would leave a gap', async () => {
    const id = await startOne();
    await store.appendTurn(userTurn(id, 0));
    const error = await rejection(store.appendTurn(assistantTurn(id, 2)));
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('next index is 1');
    expect(await turnRowCount(id)).toBe(1);
  });

  it('rejects new turns after the trajectory finished, but still accepts a retry of a stored one', async () => {
    const id = await startOne();
    await store.appendTurn(userTurn(id, 0));
    await store.finishTrajectory({ trajectoryId: id, status: 'finished' });
    const error = await rejection(store.appendTurn(assistantTurn(id, 1)));
    expect(error.code).toBe('trajectory-closed');
    expect((await store.appendTurn(userTurn(id, 0))).created).toBe(false);
    expect(await turnRowCount(id)).toBe(1);
  });

  it('rejects turns for a trajectory that does not exist', async () => {
    const error = await rejection(store.appendTurn(userTurn('00000000-0000-4000-8000-000000000000', 0)));
    expect(error.code).toBe('not-found');
  });

  it('rejects bad payloads with the field named and writes nothing', async () => {
    const id = await startOne();
    const cases: { turn: Record<string, unknown>; field: string }[] = [
      { turn: assistantTurn(id, 0, { completionLogprobs: [-0.1] }), field: 'completionLogprobs' },
      { turn: { ...userTurn(id, 0), index: -1 }, field: 'index' },
      { turn: { ...userTurn(id, 0), role: 'robot' }, field: 'role' },
      { turn: { ...userTurn(id, 0), trajectoryId: 'not-a-uuid' }, field: 'trajectoryId' },
      { turn: { trajectoryId: id, index: 0, role: 'tool', content: 'x' }, field: 'toolCallId' },
      { turn: assistantTurn(id, 0, { completionTokenIds: [1, -2] }), field: 'completionTokenIds.1' },
    ];
    for (const { turn, field } of cases) {
      const error = await rejection(store.appendTurn(turn as never));
      expect(error.code).toBe('validation');
      expect(error.issues.map((issue) => issue.path.join('.'))).toContain(field);
      expect(error.message).toContain(field);
    }
    expect(await turnRowCount(id)).toBe(0);
    expect((await store.getTrajectory(id)).trajectory.turnCount).toBe(0);
  });

  it('stores a turn once when the same append races itself', async () => {
    const id = await startOne();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => store.appendTurn(assistantTurn(id, 0))),
    );
    // Exactly one of the six created the row; the other five were retries.
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(await turnRowCount(id)).toBe(1);
    expect((await store.getTrajectory(id)).trajectory.turnCount).toBe(1);
  });

  it('stores tool calls and tool errors as given', async () => {
    const id = await startOne();
    const toolCalls = [
      { id: 'c1', type: 'function' as const, function: { name: 'add', arguments: '{"a":2,"b":2}' } },
    ];
    await store.appendTurn(assistantTurn(id, 0, { content: null, toolCalls }));
    await store.appendTurn({
      trajectoryId: id,
      index: 1,
      role: 'tool',
      content: 'no such tool',
      toolCallId: 'c1',
      toolError: 'unknown-tool',
    });
    const { turns } = await store.getTrajectory(id);
    expect(turns[0]?.toolCalls).toEqual(toolCalls);
    expect(turns[1]).toMatchObject({ role: 'tool', toolCallId: 'c1', toolError: 'unknown-tool' });
  });
});

describe('appendTurns', () => {
  it('stores an exchange in order, all or nothing, and a repeated exchange once', async () => {
    const id = await startOne();
    // The last turn leaves a gap (index 3 after 0, 1): one call takes consecutive turns, so the
    // call is refused as invalid, naming the turn, and stores nothing.
    const gap = await rejection(store.appendTurns([userTurn(id, 0), assistantTurn(id, 1), userTurn(id, 3)]));
    expect(gap.code).toBe('validation');
    expect(gap.message).toContain('turns.2: index');
    // A call starting past the next index is a gap in the trajectory: a conflict.
    const late = await rejection(store.appendTurns([userTurn(id, 1), assistantTurn(id, 2)]));
    expect(late.code).toBe('conflict');
    expect(late.message).toContain('would leave a gap');
    expect(await turnRowCount(id)).toBe(0);
    expect((await store.getTrajectory(id)).trajectory.turnCount).toBe(0);

    const stored = await store.appendTurns([userTurn(id, 0), assistantTurn(id, 1)]);
    expect(stored.map((result) => [result.index, result.created])).toEqual([
      [0, true],
      [1, true],
    ]);
    // The same exchange again (a retried call) changes nothing.
    const repeated = await store.appendTurns([userTurn(id, 0), assistantTurn(id, 1)]);
    expect(repeated.map((result) => result.created)).toEqual([false, false]);
    expect(await turnRowCount(id)).toBe(2);
    // A retried step whose stored turn differs: refused, and the new turn after it is not kept.
    const changed = await rejection(
      store.appendTurns([userTurn(id, 1, 'rewritten'), userTurn(id, 2, 'next')]),
    );
    expect(changed.code).toBe('conflict');
    expect(await turnRowCount(id)).toBe(2);
    expect((await store.getTrajectory(id)).trajectory).toMatchObject({
      turnCount: 2,
      completionTokenCount: 2,
    });
    // A retried step whose first turns are stored as given: those are no-ops, the rest is appended.
    const overlapping = await store.appendTurns([assistantTurn(id, 1), userTurn(id, 2, 'next')]);
    expect(overlapping.map((result) => [result.index, result.created])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect((await store.getTrajectory(id)).trajectory).toMatchObject({
      turnCount: 3,
      completionTokenCount: 2,
    });
  });
});
