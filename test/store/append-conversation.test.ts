// appendConversation, the recording proxy's one-statement check and append: it stores the turns the
// trajectory does not hold yet when the history before them is the stored one (by digest), counts
// only what it stored, keeps the tool list it is given, and refuses a differing or stale-beyond-repair
// history, a finished trajectory and a missing one with typed errors, storing nothing. The digests it
// stores are checked against Postgres's own sha256() (an independent implementation).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError, type StoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { emptyHistoryDigest, type HistoryEntryView, historyEntry } from '../../protocol/history-digest.ts';
import type { TurnInput } from '../../protocol/turn.ts';
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
  return (trajectories[0] as { id: string }).id;
}

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isStoreError(error)) throw new Error(`expected a StoreError, got ${String(error)}`);
  return error;
}

/** The digest chain of `turns` computed by Postgres (sha256(), convert_to()), from the empty digest. */
async function postgresChain(turns: readonly HistoryEntryView[]): Promise<string[]> {
  const digests: string[] = [];
  let previous = emptyHistoryDigest;
  for (const turn of turns) {
    const result = await store.sql.query(
      "select encode(sha256(decode($1, 'hex') || convert_to($2, 'UTF8')), 'hex')",
      [previous, historyEntry({ role: turn.role, content: turn.content, toolCallId: turn.toolCallId })],
    );
    previous = String(result.rows[0]?.[0]);
    digests.push(previous);
  }
  return digests;
}

const tools = [{ type: 'function' as const, function: { name: 'add', parameters: { type: 'object' } } }];

describe('appendConversation', () => {
  it('stores the turns after a matching history, with their digests, counters and tools', async () => {
    const id = await startOne();
    const opening = [userTurn(id, 0, 'hello'), assistantTurn(id, 1)];
    const first = await store.appendConversation({ turns: opening, previousDigest: '', tools });
    expect(first.firstAppended).toBe(0);
    const next = [userTurn(id, 2, 'again'), assistantTurn(id, 3, { content: 'ok' })];
    const second = await store.appendConversation({ turns: next, previousDigest: first.historyDigest });
    expect(second).toEqual({ firstAppended: 2, historyDigest: expect.any(String) });
    const { trajectory, turns } = await store.getTrajectory(id);
    const all = [...opening, ...next];
    expect(turns.map((turn) => turn.content)).toEqual(all.map((turn) => turn.content));
    const chain = await postgresChain(all);
    expect(turns.map((turn) => turn.historyDigest)).toEqual(chain);
    expect(second.historyDigest).toBe(chain.at(-1));
    // Two assistant turns: 21 prompt tokens, 2 completion tokens and 35.5 ms each (fixtures.ts).
    expect(trajectory).toMatchObject({
      turnCount: 4,
      promptTokenCount: 42,
      completionTokenCount: 4,
      latencyMs: 71,
      tools,
    });
  });

  it('skips the turns another writer stored when their digests agree, and reports the stored tools', async () => {
    const id = await startOne();
    const opening = [userTurn(id, 0, 'hello'), assistantTurn(id, 1)];
    await store.appendConversation({ turns: opening, previousDigest: '' });
    // Another edge stored the next exchange (and a tool list) after this caller's view of turn 2.
    const theirs = [userTurn(id, 2, 'again'), assistantTurn(id, 3, { content: 'theirs' })];
    const [, before] = await postgresChain(opening);
    await store.appendConversation({ turns: theirs, previousDigest: before as string, tools });
    // This caller still believes 2 turns are stored: it sends the client's echo of turn 3 (from the
    // client, so no token ids: only role and text are compared) and a new user turn and reply.
    const mine: TurnInput[] = [
      userTurn(id, 2, 'again'),
      { trajectoryId: id, index: 3, role: 'assistant', content: 'theirs' },
      userTurn(id, 4, 'third'),
      assistantTurn(id, 5, { content: 'mine' }),
    ];
    const result = await store.appendConversation({ turns: mine, previousDigest: before as string });
    expect(result.firstAppended).toBe(4);
    expect(result.storedTools).toEqual(tools);
    const { trajectory, turns } = await store.getTrajectory(id);
    expect(turns.map((turn) => turn.content)).toEqual(['hello', '4', 'again', 'theirs', 'third', 'mine']);
    // Turn 3 is theirs as they stored it (with its tokens), counted once.
    expect(turns[3]?.completionTokenIds).toEqual([19, 151645]);
    expect(trajectory).toMatchObject({ turnCount: 6, completionTokenCount: 6, promptTokenCount: 63 });
    expect(turns.map((turn) => turn.historyDigest)).toEqual(await postgresChain(turns));
  });

  it('refuses a history that differs, one the trajectory is past, a finished and a missing trajectory', async () => {
    const id = await startOne();
    const opening = [userTurn(id, 0, 'hello'), assistantTurn(id, 1)];
    const { historyDigest } = await store.appendConversation({ turns: opening, previousDigest: '' });
    const otherDigest = (await postgresChain([userTurn(id, 0, 'bye'), assistantTurn(id, 1)]))[1] as string;
    const differs = await rejection(
      store.appendConversation({
        turns: [userTurn(id, 2), assistantTurn(id, 3)],
        previousDigest: otherDigest,
      }),
    );
    expect(differs.code).toBe('history-mismatch');
    // A view one turn behind whose turn differs from the stored one.
    const [zero] = await postgresChain(opening);
    const rewritten = [
      { trajectoryId: id, index: 1, role: 'assistant' as const, content: 'no' },
      userTurn(id, 2),
    ];
    const past = await rejection(
      store.appendConversation({
        turns: [...rewritten, assistantTurn(id, 3)],
        previousDigest: zero as string,
      }),
    );
    expect(past.code).toBe('history-mismatch');
    // A retried call: the trajectory already holds its reply's index.
    const retried = await rejection(
      store.appendConversation({
        turns: [userTurn(id, 0, 'hello'), assistantTurn(id, 1)],
        previousDigest: '',
      }),
    );
    expect(retried.code).toBe('history-mismatch');
    expect((await store.getTrajectory(id)).trajectory.turnCount).toBe(2);

    await store.finishTrajectory({ trajectoryId: id, status: 'finished' });
    const closed = await rejection(
      store.appendConversation({
        turns: [userTurn(id, 2), assistantTurn(id, 3)],
        previousDigest: historyDigest,
      }),
    );
    expect(closed.code).toBe('trajectory-closed');
    expect(closed.message).toBe(`trajectory ${id} is finished; it takes no more turns`);
    const missing = crypto.randomUUID();
    const absent = await rejection(
      store.appendConversation({ turns: [userTurn(missing, 0)], previousDigest: '' }),
    );
    expect(absent.code).toBe('not-found');
    expect((await store.getTrajectory(id)).turns).toHaveLength(2);
  });

  it('refuses when the last stored turn has no digest (stored before the column)', async () => {
    const id = await startOne();
    const { historyDigest } = await store.appendConversation({
      turns: [userTurn(id, 0), assistantTurn(id, 1)],
      previousDigest: '',
    });
    await store.sql.query('update turns set history_digest = null where trajectory_id = $1 and index = 1', [
      id,
    ]);
    const refused = await rejection(
      store.appendConversation({
        turns: [userTurn(id, 2), assistantTurn(id, 3)],
        previousDigest: historyDigest,
      }),
    );
    expect(refused.code).toBe('history-mismatch');
  });

  it('validates its input: consecutive turns of one trajectory, a hex digest', async () => {
    const id = await startOne();
    const gap = await rejection(
      store.appendConversation({ turns: [userTurn(id, 0), assistantTurn(id, 2)], previousDigest: '' }),
    );
    expect(gap.code).toBe('validation');
    const digest = await rejection(
      store.appendConversation({ turns: [userTurn(id, 0)], previousDigest: 'not hex' }),
    );
    expect(digest.code).toBe('validation');
    expect((await store.getTrajectory(id)).trajectory.turnCount).toBe(0);
  });

  it('lets exactly one of two calls from the same head in; the other is refused, nothing doubled', async () => {
    for (let round = 0; round < 10; round++) {
      const id = await startOne();
      const { historyDigest } = await store.appendConversation({
        turns: [userTurn(id, 0), assistantTurn(id, 1)],
        previousDigest: '',
      });
      const call = (content: string) =>
        store.appendConversation({
          turns: [userTurn(id, 2, 'next'), assistantTurn(id, 3, { content })],
          previousDigest: historyDigest,
        });
      const outcomes = await Promise.allSettled([call('left'), call('right')]);
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      const [refused] = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: 'history-mismatch' });
      const { trajectory, turns } = await store.getTrajectory(id);
      expect(turns).toHaveLength(4);
      expect(trajectory).toMatchObject({ turnCount: 4, completionTokenCount: 4 });
    }
  });
});
