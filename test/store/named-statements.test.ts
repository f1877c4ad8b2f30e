// The append statements run as prepared statements (db/named-statement.ts); on PGlite their values
// travel as SQL literals. Whatever the text holds (quotes, backslashes, the dollar-quote delimiter
// itself, escapes of what Postgres cannot hold) it is stored as given, numbers keep their bits, and
// the statements are prepared once per session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import { assistantTurn, makeGroup, userTurn } from '../support/fixtures.ts';
import { openTestStore, type TestStore, testServerUrl } from '../support/open-test-store.ts';

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

const awkward = [
  "it's 'quoted' ''twice''",
  'back\\slash \\n \\u0000 \\\\',
  'the delimiter $edgerl$ inside, $$ and $edgerl$x$edgerl$',
  'nul \u0000 and lone \ud800 surrogate, 🦀',
  '',
];

describe('the prepared append statements', () => {
  it('store any text as given, through appendTurn, appendTurns and appendConversation', async () => {
    for (const text of awkward) {
      const id = await startOne();
      await store.appendTurn(userTurn(id, 0, text));
      await store.appendTurns([assistantTurn(id, 1, { content: text }), userTurn(id, 2, text)]);
      const { historyDigest } = await store.getTrajectoryHead(id);
      await store.appendConversation({
        turns: [
          userTurn(id, 3, text),
          assistantTurn(id, 4, { content: text, ...(text ? { servedBy: text } : {}) }),
        ],
        previousDigest: historyDigest as string,
      });
      const { turns } = await store.getTrajectory(id);
      expect(turns.map((turn) => turn.content)).toEqual([text, text, text, text, text]);
      expect(turns[4]?.servedBy).toBe(text || 'agent@0');
    }
  });

  it('keep every bit of the numbers they add up', async () => {
    const id = await startOne();
    const latencies = [0.1, 0.2, 1e-7, 123456.789, 5e-324];
    for (const [index, latencyMs] of latencies.entries()) {
      await store.appendTurn(assistantTurn(id, index, { latencyMs }));
    }
    const { trajectory, turns } = await store.getTrajectory(id);
    expect(turns.map((turn) => turn.latencyMs)).toEqual(latencies);
    // Postgres adds float8 as JavaScript adds numbers (IEEE 754 double, round to nearest).
    expect(trajectory.latencyMs).toBe(latencies.reduce((sum, value) => sum + value, 0));
  });

  // On a server the pool's connections each prepare at the protocol level, and which one a query
  // takes is the pool's choice, so this is counted on the embedded store's one session.
  it.skipIf(testServerUrl !== undefined)('are prepared once per session on the embedded store', async () => {
    const id = await startOne();
    const before = await store.sql.query('select count(*) from pg_prepared_statements');
    for (let index = 0; index < 5; index++) await store.appendTurn(userTurn(id, index));
    const after = await store.sql.query('select count(*) from pg_prepared_statements');
    expect(Number(after.rows[0]?.[0])).toBe(Number(before.rows[0]?.[0]));
    expect(Number(after.rows[0]?.[0])).toBeGreaterThan(0);
  });
});
