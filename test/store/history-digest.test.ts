// The history digest the append statement stores per turn (protocol/history-digest.ts): the chain
// computed in SQL equals the one computed from the same conversation in JavaScript, across steps of
// any size, for text the store must escape, and through the trajectory head read. A turn stored
// without a digest (before the column) leaves the chain unknown from there on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import { historyDigests, historyEntry } from '../../protocol/history-digest.ts';
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

const expectedDigests = (turns: readonly TurnInput[]) =>
  historyDigests(
    turns.map((turn) =>
      historyEntry({ role: turn.role, content: turn.content, toolCallId: turn.toolCallId }),
    ),
  );

describe('the history digest', () => {
  it('is the chain of the conversation, whatever the steps, and the head gives the last one', async () => {
    const id = await startOne();
    expect((await store.getTrajectoryHead(id)).historyDigest).toBe('');
    const toolCalls = [{ id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } }];
    const given: TurnInput[] = [
      { trajectoryId: id, index: 0, role: 'system', content: 'Be brief.' },
      userTurn(id, 1),
      assistantTurn(id, 2, { content: null, toolCalls }),
      { trajectoryId: id, index: 3, role: 'tool', content: '4', toolCallId: 'c1' },
      // Text Postgres cannot hold: stored escaped, digested as given.
      userTurn(id, 4, 'nul \u0000 here, lone \ud800 there, a backslash \\u0000 and 🦀'),
      assistantTurn(id, 5, { content: 'done' }),
    ];
    await store.appendTurn(given[0] as TurnInput);
    await store.appendTurns(given.slice(1, 4));
    await store.appendTurns(given.slice(4));
    const { turns } = await store.getTrajectory(id);
    expect(turns[4]?.textEncoding).toBe('escaped');
    const expected = expectedDigests(given);
    expect(turns.map((turn) => turn.historyDigest)).toEqual(expected);
    expect(new Set(expected).size).toBe(expected.length);
    expect((await store.getTrajectoryHead(id)).historyDigest).toBe(expected.at(-1));
  });

  it('differs where the conversation differs: text, role, a tool call id', async () => {
    const variants: TurnInput[][] = [];
    for (const second of [
      userTurn('', 1, 'a'),
      userTurn('', 1, 'b'),
      { trajectoryId: '', index: 1, role: 'system' as const, content: 'a' },
      { trajectoryId: '', index: 1, role: 'tool' as const, content: 'a', toolCallId: 'x' },
      { trajectoryId: '', index: 1, role: 'tool' as const, content: 'a', toolCallId: 'y' },
    ]) {
      const id = await startOne();
      const turns = [userTurn(id, 0), { ...second, trajectoryId: id }];
      await store.appendTurns(turns);
      variants.push(turns);
      const head = await store.getTrajectoryHead(id);
      expect(head.historyDigest).toBe(expectedDigests(turns).at(-1));
    }
    const heads = variants.map((turns) => expectedDigests(turns).at(-1));
    expect(new Set(heads).size).toBe(variants.length);
  });

  it('is null after a turn stored without one, and the head says so', async () => {
    const id = await startOne();
    await store.appendTurns([userTurn(id, 0), assistantTurn(id, 1)]);
    // As a turn stored before the column was added.
    await store.sql.query('update turns set history_digest = null where trajectory_id = $1 and index = 1', [
      id,
    ]);
    expect((await store.getTrajectoryHead(id)).historyDigest).toBeNull();
    await store.appendTurns([userTurn(id, 2), assistantTurn(id, 3)]);
    const { turns } = await store.getTrajectory(id);
    expect(turns.map((turn) => turn.historyDigest === null)).toEqual([false, true, true, true]);
    expect((await store.getTrajectoryHead(id)).historyDigest).toBeNull();
  });
});
