// Round trips per store write, pinned on the driver (test/support/counting-store.ts counts every
// statement sent, BEGIN and COMMIT included): a recorded step, a started group, a finished trajectory.
// Also the race of two writers at one index on the same trajectory (real concurrency on the server,
// where the pool runs them on separate connections; serialised in the embedded store).
import { beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { ApiError } from '../../edge/http/api-error.ts';
import { type ProxyContext, recordChatCompletion } from '../../edge/proxy/record-chat-completion.ts';
import { TrajectoryHeads } from '../../edge/proxy/trajectory-heads.ts';
import { RouteCache } from '../../edge/routing/route-cache.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import type { InferenceDouble } from '../edge/support/inference-double.ts';
import { useCountingSetup } from '../support/counting-setup.ts';
import { type CountingStore, roundTripsOf } from '../support/counting-store.ts';
import { assistantTurn, makeGroup, uniqueName, userTurn } from '../support/fixtures.ts';

const setup = useCountingSetup();
let counting: CountingStore;
let store: Store;
let inference: InferenceDouble;

beforeAll(() => {
  ({ counting, store, inference } = setup);
});

async function startOne(writer: 'runner' | 'client' = 'client'): Promise<string> {
  const { trajectories } = await makeGroup(store, { size: 1, writer });
  return (trajectories[0] as { id: string }).id;
}

const lease = { runner: 'edge-1', leaseSeconds: 60 };

function toolTurn(trajectoryId: string, index: number, callId: string) {
  return { trajectoryId, index, role: 'tool' as const, content: 'ok', toolCallId: callId };
}

describe('round trips', () => {
  it('appends a turn, and a whole step (assistant turn and its tool results), in one round trip', async () => {
    const id = await startOne('runner');
    await store.claimTrajectory({ trajectoryId: id, ...lease });
    expect(await roundTripsOf(counting, () => store.appendTurn(userTurn(id, 0), lease))).toBe(1);
    const toolCalls = [
      { id: 'a', type: 'function' as const, function: { name: 'add', arguments: '{}' } },
      { id: 'b', type: 'function' as const, function: { name: 'add', arguments: '{}' } },
    ];
    const step = [assistantTurn(id, 1, { toolCalls }), toolTurn(id, 2, 'a'), toolTurn(id, 3, 'b')];
    expect(await roundTripsOf(counting, () => store.appendTurns(step, lease))).toBe(1);
    const { trajectory, turns } = await store.getTrajectory(id);
    expect(turns.map((turn) => turn.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    // 4 turns; one assistant turn: 21 prompt tokens, 2 completion tokens, 35.5 ms.
    expect(trajectory).toMatchObject({ turnCount: 4, promptTokenCount: 21, completionTokenCount: 2 });
  });

  it('explains a refusal with reads only after the statement appended nothing', async () => {
    const id = await startOne();
    await store.appendTurns([userTurn(id, 0), assistantTurn(id, 1)]);
    // A retried step: the statement, then the trajectory row and the stored turns it repeats.
    expect(
      await roundTripsOf(counting, () => store.appendTurns([userTurn(id, 0), assistantTurn(id, 1)])),
    ).toBe(3);
    // A gap: the statement and the trajectory row.
    const gap = roundTripsOf(counting, () => store.appendTurn(userTurn(id, 5)));
    await expect(gap).rejects.toThrow('would leave a gap');
    expect(counting.roundTrips()).toBe(2);
  });
});

describe('a proxied call', () => {
  /** A trajectory holding `length` turns (a user and an assistant turn per exchange), appended as an episode would. */
  async function storedConversation(length: number): Promise<{ id: string; messages: TurnInput[] }> {
    const id = await startOne();
    const turns = Array.from({ length }, (_, index) =>
      index % 2 === 0
        ? userTurn(id, index, `question ${index}`)
        : assistantTurn(id, index, { content: `answer ${index}` }),
    );
    for (let start = 0; start < turns.length; start += 100)
      await store.appendTurns(turns.slice(start, start + 100));
    // As after the first proxied call: the (empty) tool list is stored, so this call does not change it.
    await store.setTrajectoryTools({ trajectoryId: id, tools: [] });
    return { id, messages: turns };
  }

  type Message = { role: 'user' | 'assistant'; content: string };
  const asMessages = (history: readonly TurnInput[]): Message[] =>
    history.map((turn) => ({ role: turn.role as Message['role'], content: turn.content ?? '' }));
  /** Without `edge`: no head or route kept between calls (every call reads what it needs). */
  const proxied = (
    trajectoryId: string,
    history: readonly Message[],
    last: string,
    edge: Pick<ProxyContext, 'heads' | 'routes'> = {},
  ) =>
    recordChatCompletion(
      { store, upstream: { baseUrl: inference.baseUrl, requestTokenIds: false, timeoutMs: 10_000 }, ...edge },
      {
        trajectoryId,
        request: { model: 'whatever', messages: [...history, { role: 'user', content: last }] },
      },
    );

  /** Round trips and rows read by one proxied call continuing a trajectory of `length` turns. */
  async function measure(length: number) {
    const { id, messages } = await storedConversation(length);
    counting.reset();
    const result = await proxied(id, asMessages(messages), 'one more');
    expect(result.status).toBe(200);
    const cost = { roundTrips: counting.roundTrips(), rowsRead: counting.rowsRead() };
    const { turns } = await store.getTrajectory(id);
    expect(turns).toHaveLength(length + 2);
    expect(turns.at(-2)?.content).toBe('one more');
    return cost;
  }

  it('checks the history and records the exchange in round trips and rows that do not grow with the trajectory', async () => {
    const short = await measure(2);
    const long = await measure(600);
    expect(long).toEqual(short);
    // The trajectory row with its last turn's digest (1 row), the route lookup of a model the store
    // does not know (2 statements, no rows: routing's own, not the history check's), the append (1 row).
    expect(short).toEqual({ roundTrips: 4, rowsRead: 2 });
  });

  it("continues a conversation in one round trip when the edge keeps the trajectory's head", async () => {
    for (const length of [2, 600]) {
      const edge = { heads: new TrajectoryHeads(), routes: new RouteCache(60_000) };
      const { id, messages } = await storedConversation(length);
      const history = asMessages(messages);
      // The first call on this edge reads the head and looks the model up (as above), and keeps both.
      const first = await proxied(id, history, 'one more', edge);
      const reply = JSON.parse(first.body as string).choices[0].message as Message;
      const next = [...history, { role: 'user' as const, content: 'one more' }, reply];
      counting.reset();
      const second = await proxied(id, next, 'and another', edge);
      expect(second.status).toBe(200);
      // The append statement alone: it checks the head it was given and stores the call (1 row back).
      expect({ roundTrips: counting.roundTrips(), rowsRead: counting.rowsRead() }).toEqual({
        roundTrips: 1,
        rowsRead: 1,
      });
      const { turns } = await store.getTrajectory(id);
      expect(turns.map((turn) => turn.content).slice(length)).toEqual([
        'one more',
        reply.content,
        'and another',
        expect.any(String),
      ]);
    }
  });

  it('reads the stored turns only to name the first differing message of a rewritten history', async () => {
    const { id, messages } = await storedConversation(300);
    const rewritten = messages.map((turn) => (turn.index === 123 ? { ...turn, content: 'rewritten' } : turn));
    const refused = await proxied(id, asMessages(rewritten), 'one more').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'conflict', field: 'messages.123' });
    expect((await store.getTrajectory(id)).trajectory.turnCount).toBe(300);
  });
});

describe('starting a group', () => {
  it("writes a group and all its slots in one round trip, in slot order, on the task's env", async () => {
    const task = await store.upsertTask({ env: 'test-env', key: uniqueName('task'), input: { q: 1 } });
    const tools = [{ type: 'function' as const, function: { name: 'add', parameters: { type: 'object' } } }];
    let started: Awaited<ReturnType<Store['startGroup']>> | undefined;
    const trips = await roundTripsOf(counting, async () => {
      started = await store.startGroup({
        taskId: task.id,
        size: 3,
        metadata: { note: 'x' },
        slots: [0, 1, 2].map((slot) => ({ stickinessKey: 'k', metadata: { slot } })),
        tools,
        awaitRunnerSeconds: 60,
      });
    });
    expect(trips).toBe(1);
    if (!started) throw new Error('not started');
    expect(started.group).toMatchObject({
      taskId: task.id,
      size: 3,
      status: 'running',
      metadata: { note: 'x' },
    });
    expect(started.group.createdAt).toBeInstanceOf(Date);
    expect(started.trajectories.map((trajectory) => trajectory.metadata)).toEqual([
      { slot: 0 },
      { slot: 1 },
      { slot: 2 },
    ]);
    const stored = await store.getGroup({ groupId: started.group.id });
    expect(stored.trajectories).toHaveLength(3);
    for (const trajectory of started.trajectories) {
      expect(trajectory).toMatchObject({
        env: 'test-env',
        groupId: started.group.id,
        tools,
        status: 'running',
      });
      expect(trajectory.leaseExpiresAt).toBeInstanceOf(Date);
    }
  });

  it('refuses a missing task or a slot count other than the size, writing nothing', async () => {
    const missing = store.startGroup({ taskId: crypto.randomUUID(), size: 1, slots: [{}] });
    await expect(missing).rejects.toMatchObject({ code: 'not-found' });
    const task = await store.upsertTask({ env: 'test-env', key: uniqueName('task'), input: { q: 1 } });
    const short = store.startGroup({ taskId: task.id, size: 2, slots: [{}] });
    await expect(short).rejects.toMatchObject({ code: 'validation' });
  });
});

describe('finishing', () => {
  it('finishes a trajectory, and completes its group with the last one, in one round trip each', async () => {
    const { group, trajectories } = await makeGroup(store, { size: 2 });
    const [first, last] = trajectories.map((trajectory) => trajectory.id) as [string, string];
    const finish = (id: string) => store.finishTrajectory({ trajectoryId: id, status: 'finished' });
    let result: Awaited<ReturnType<typeof finish>> | undefined;
    expect(await roundTripsOf(counting, async () => (result = await finish(first)))).toBe(1);
    expect(result?.groupCompleted).toBe(false);
    expect(await roundTripsOf(counting, async () => (result = await finish(last)))).toBe(1);
    expect(result).toMatchObject({ groupCompleted: true, trajectory: { id: last, status: 'finished' } });
    expect(result?.trajectory.finishedAt).toBeInstanceOf(Date);
    expect((await store.getGroup({ groupId: group.id })).group.status).toBe('complete');
  });

  it("writes an episode's last step with its finish in one round trip, completing the group; a retry is a no-op", async () => {
    const { group, trajectories } = await makeGroup(store, { size: 2, writer: 'runner' });
    const [first, last] = trajectories.map((trajectory) => trajectory.id) as [string, string];
    const finish = { status: 'finished' as const, verifierReward: 1 };
    const final = (id: string, runner = 'edge-1') =>
      store.appendFinalTurns({ turns: [assistantTurn(id, 1)], finish, lease: { runner, leaseSeconds: 60 } });
    let result: Awaited<ReturnType<typeof final>> | undefined;
    for (const id of [first, last]) {
      await store.claimTrajectory({ trajectoryId: id, ...lease });
      await store.appendTurn(userTurn(id, 0), lease);
    }
    expect(await roundTripsOf(counting, async () => (result = await final(first)))).toBe(1);
    expect(result).toMatchObject({
      turns: [{ index: 1, created: true }],
      finished: { groupCompleted: false },
    });
    expect(await roundTripsOf(counting, async () => (result = await final(last)))).toBe(1);
    expect(result?.finished).toMatchObject({ groupCompleted: true, trajectory: { status: 'finished' } });
    const stored = await store.getTrajectory(last);
    expect(stored.trajectory).toMatchObject({ turnCount: 2, completionTokenCount: 2, verifierReward: 1 });
    expect(stored.trajectory.leaseExpiresAt).toBeNull();
    expect((await store.getGroup({ groupId: group.id })).group).toMatchObject({
      status: 'complete',
      endedCount: 2,
    });
    // A retry (its answer was lost): the stored turn and the same end are no-ops, and the group is counted once.
    expect(await final(last)).toMatchObject({
      turns: [{ created: false }],
      finished: { groupCompleted: false },
    });
    expect((await store.getGroup({ groupId: group.id })).group.endedCount).toBe(2);
    // Another end, another turn, another runner: refused with the codes of the two calls it stands for.
    const otherEnd = store.appendFinalTurns({
      turns: [assistantTurn(last, 1)],
      finish: { status: 'finished', verifierReward: 0 },
      lease,
    });
    await expect(otherEnd).rejects.toMatchObject({ code: 'trajectory-closed' });
    const otherTurn = store.appendFinalTurns({
      turns: [assistantTurn(last, 1, { content: 'other' })],
      finish,
      lease,
    });
    await expect(otherTurn).rejects.toMatchObject({ code: 'conflict' });
    const { trajectories: more } = await makeGroup(store, { size: 1, writer: 'runner' });
    const taken = (more[0] as { id: string }).id;
    await store.claimTrajectory({ trajectoryId: taken, runner: 'edge-2', leaseSeconds: 60 });
    await store.appendTurn(userTurn(taken, 0), { runner: 'edge-2', leaseSeconds: 60 });
    await expect(final(taken)).rejects.toMatchObject({ code: 'lease-lost' });
    expect((await store.getTrajectory(taken)).trajectory).toMatchObject({ status: 'running', turnCount: 1 });
  });

  it('completes a group exactly once when its last trajectories finish at the same time', async () => {
    for (let round = 0; round < 10; round++) {
      const { group, trajectories } = await makeGroup(store, { size: 3 });
      const results = await Promise.all(
        trajectories.map((trajectory) =>
          store.finishTrajectory({ trajectoryId: trajectory.id, status: 'finished', verifierReward: 1 }),
        ),
      );
      expect(results.filter((result) => result.groupCompleted)).toHaveLength(1);
      expect((await store.getGroup({ groupId: group.id })).group.status).toBe('complete');
    }
  });
});

describe('two writers at one index', () => {
  it('lets exactly one of two different turns in, and the loser gets a conflict', async () => {
    for (let round = 0; round < 10; round++) {
      const id = await startOne();
      await store.appendTurn(userTurn(id, 0));
      const outcomes = await Promise.allSettled([
        store.appendTurn(assistantTurn(id, 1, { content: 'left' })),
        store.appendTurn(assistantTurn(id, 1, { content: 'right' })),
        store.appendTurns([assistantTurn(id, 1, { content: 'left' }), toolTurn(id, 2, 'x')]),
      ]);
      const conflicts = outcomes.filter(
        (outcome) => outcome.status === 'rejected' && isStoreError(outcome.reason, 'conflict'),
      );
      const { trajectory, turns } = await store.getTrajectory(id);
      const stored = turns[1]?.content;
      // 'left' won: its twin inside the step is a repeat and the step's tool turn is appended, so
      // only 'right' conflicts. 'right' won: both others conflict (content differs at index 1).
      expect(conflicts).toHaveLength(stored === 'left' ? 1 : 2);
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual(conflicts);
      expect(trajectory.turnCount).toBe(turns.length);
      // Counted once whichever won: one assistant turn, 2 completion tokens.
      expect(trajectory.completionTokenCount).toBe(2);
    }
  });
});
