// The episode loop's sink over the real store holds every step to the writers' one rule set
// (protocol/validate-turns.ts) before the store sees it: a tool result answering no call, a logprob
// above 0, two assistant turns in a row are refused as `validation` and nothing of the step is stored
// (a refused last step ends the episode `error`); a resumed run checks its steps after the stored turns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { StoreTrajectorySink } from '../../edge/rollouts/store-trajectory-sink.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import { makeGroup } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let held: TestStore;
let store: Store;
beforeAll(async () => {
  held = await openTestStore();
  store = held.store;
});
afterAll(async () => {
  await held?.close();
});

const lease = { runner: 'sink-test', leaseSeconds: 60 };
const call = (id: string) => ({
  id,
  type: 'function' as const,
  function: { name: 'lookup', arguments: '{}' },
});

async function claimed(): Promise<string> {
  const { trajectories } = await makeGroup(store, { writer: 'runner', size: 1 });
  const id = (trajectories[0] as { id: string }).id;
  expect(await store.claimTrajectory({ trajectoryId: id, ...lease })).toMatchObject({ claimed: true });
  return id;
}

async function refusal(work: Promise<unknown>): Promise<string> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isStoreError(error, 'validation'), String(error)).toBe(true);
  return (error as Error).message;
}

describe('StoreTrajectorySink', () => {
  it('refuses a step no writer may store, storing nothing of it, and takes the legal one', async () => {
    const trajectoryId = await claimed();
    const turn = (index: number, fields: Omit<TurnInput, 'trajectoryId' | 'index'>): TurnInput => ({
      trajectoryId,
      index,
      ...fields,
    });
    const sink = new StoreTrajectorySink(store, trajectoryId, { lease });
    await sink.appendTurns([
      turn(0, { role: 'system', content: 's' }),
      turn(1, { role: 'user', content: 'q' }),
    ]);
    const calling = turn(2, { role: 'assistant', content: null, toolCalls: [call('c1')] });
    expect(
      await refusal(sink.appendTurns([calling, turn(3, { role: 'tool', content: 'r', toolCallId: 'c9' })])),
    ).toBe(
      'appendTurns: turn 3: toolCallId: answers no call of the assistant turn before it (its calls: "c1")',
    );
    expect(
      await refusal(
        sink.appendTurns([
          turn(2, { role: 'assistant', content: 'a', completionTokenIds: [1], completionLogprobs: [5] }),
        ]),
      ),
    ).toMatch(/^appendTurns: turn 2: completionLogprobs\.0: must be ≤ 0/);
    expect((await store.getTrajectory(trajectoryId)).turns).toHaveLength(2);
    await sink.appendTurns([calling, turn(3, { role: 'tool', content: 'r', toolCallId: 'c1' })]);

    // A resumed run (a new sink over the stored turns) checks its steps after them.
    const stored = (await store.getTrajectory(trajectoryId)).turns;
    const resumed = new StoreTrajectorySink(store, trajectoryId, { lease, history: stored });
    expect(
      await refusal(resumed.appendTurns([turn(4, { role: 'tool', content: 'again', toolCallId: 'c1' })])),
    ).toMatch(/answers call "c1" a second time/);
    await resumed.appendTurns([turn(4, { role: 'assistant', content: 'done?' })]);
    // The last step, written with the finish: refused the same way, the episode ends `error` without it.
    await resumed.finish({ status: 'finished', verifierReward: 1 }, [
      turn(5, { role: 'assistant', content: 'x' }),
    ]);
    const { trajectory, turns } = await store.getTrajectory(trajectoryId);
    expect(trajectory).toMatchObject({ status: 'error', turnCount: 5 });
    expect(trajectory.errorReason).toMatch(/turn 5: role: an assistant turn right after another/);
    expect(turns.map((stored) => stored.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
  });

  it('refuses a reward outside [0, 1], as the finish route does', async () => {
    const trajectoryId = await claimed();
    const sink = new StoreTrajectorySink(store, trajectoryId, { lease });
    await sink.appendTurns([{ trajectoryId, index: 0, role: 'user', content: 'q' }]);
    expect(await refusal(sink.finish({ status: 'finished', verifierReward: 1e308 }))).toMatch(
      /verifierReward: must be in \[0, 1\], got 1e\+308/,
    );
  });
});
