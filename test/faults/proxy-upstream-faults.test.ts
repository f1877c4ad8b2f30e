// Fault scenario: the recording proxy in front of an inference endpoint that answers 5xx, a body that
// is not JSON, a completion with no choices, nothing in time, a dropped connection, then recovers.
// The client retries each time with a shorter prompt; only the exchange the endpoint accepted is stored.
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import type { Store } from '../../db/store.ts';
import { type EdgeHarness, startEdgeHarness } from '../edge/support/edge-harness.ts';
import { countEpisodeFaults } from './support/count-episode-faults.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { TrajectoryKeys } from '../support/trajectory-keys.ts';

const keys = new TrajectoryKeys();

let h: EdgeHarness;
beforeAll(async () => {
  // Short enough that a delayed answer is a timeout, long enough for a healthy call on a busy machine.
  h = await startEdgeHarness({ defaultModel: 'tiny-base', upstreamTimeoutMs: 1_500 });
});
afterAll(async () => {
  await h?.close();
});

function chat(trajectoryId: string, body: Record<string, unknown>) {
  return h.api('/v1/chat/completions', { json: body, headers: keys.header(trajectoryId) });
}

async function startTrajectory(): Promise<string> {
  const response = await h.api('/v1/trajectories', { json: { env: 'my-agent' } });
  expect(response.status).toBe(201);
  return keys.remember(await response.json());
}

type StoredTurn = Awaited<ReturnType<Store['getTrajectory']>>['turns'][number];

async function storedTurns(trajectoryId: string): Promise<readonly StoredTurn[]> {
  return (await h.store.getTrajectory(trajectoryId)).turns;
}

/**
 * What the store holds against what the client was told: each exchange answered 200 must be stored
 * once (`accepted`), nothing else. The proxy's trajectory stays `running` until its client ends it.
 */
async function expectNothingLost(context: TestContext, id: string, accepted: number): Promise<void> {
  const { outcome, found } = await countEpisodeFaults(h.store, {
    trajectoryIds: [id],
    replies: accepted,
    clientOwned: true,
  });
  recordFaultOutcome(context, outcome);
  expect(outcome, found.join('; ')).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
}

/** Every stored index once, in order 0, 1, 2, … (a duplicate or a gap shows here). */
function expectDense(turns: readonly StoredTurn[]): void {
  expect(turns.map((turn) => turn.index)).toEqual(turns.map((_, index) => index));
}

const system = { role: 'system', content: 'You follow keys.' };
const question = { role: 'user', content: 'Find the value of key ab.' };
const context = (n: number) => ({
  role: 'user',
  content: `Background note ${n}: ${'lorem ipsum '.repeat(40)}`,
});

describe('the recording proxy under upstream faults', () => {
  it('stores nothing for failed calls, then exactly the exchange the endpoint accepted', async (testContext) => {
    const id = await startTrajectory();
    const calls = h.double.requests.length;

    // 1. 503: passed through, nothing stored.
    h.double.fail({ kind: 'status', status: 503, body: { error: { message: 'overloaded' } } });
    const overloaded = await chat(id, {
      model: 'm',
      messages: [system, context(1), context(2), context(3), question],
    });
    expect(overloaded.status).toBe(503);
    expect(await storedTurns(id)).toEqual([]);

    // 2. A 200 whose body is not JSON: 502, nothing stored. The client drops a note and retries.
    h.double.fail({ kind: 'text', body: '{"choices": [' });
    const garbage = await chat(id, { model: 'm', messages: [system, context(1), context(2), question] });
    expect(garbage.status).toBe(502);
    expect(((await garbage.json()) as { error: { code: string } }).error.code).toBe('bad-gateway');
    expect(await storedTurns(id)).toEqual([]);

    // 3. JSON that is no completion: 502, nothing stored.
    h.double.fail({ kind: 'text', body: '{"choices": []}' });
    const empty = await chat(id, { model: 'm', messages: [system, context(1), question] });
    expect(empty.status).toBe(502);
    expect(await storedTurns(id)).toEqual([]);

    // 4. No answer within the upstream limit: 502 naming the timeout, nothing stored.
    h.double.delayMs = 4_000;
    const late = await chat(id, { model: 'm', messages: [system, context(1), question] });
    h.double.delayMs = 0;
    expect(late.status).toBe(502);
    expect(((await late.json()) as { error: { message: string } }).error.message).toMatch(/no answer within/);
    expect(await storedTurns(id)).toEqual([]);

    // 5. A streamed call answered 500: passed through, nothing stored.
    h.double.fail({ kind: 'status', status: 500 });
    const streamed = await chat(id, { model: 'm', stream: true, messages: [system, context(1), question] });
    expect(streamed.status).toBe(500);
    await streamed.text();
    expect(await storedTurns(id)).toEqual([]);

    // 6. The connection dropped: 502, nothing stored.
    h.double.fail({ kind: 'drop' });
    const dropped = await chat(id, { model: 'm', messages: [system, context(1), question] });
    expect(dropped.status).toBe(502);
    expect(await storedTurns(id)).toEqual([]);

    // 7. Recovered: the shortest prompt goes through and is stored with its reply, once.
    const ok = await chat(id, { model: 'm', messages: [system, question] });
    expect(ok.status).toBe(200);
    const reply = ((await ok.json()) as { choices: { message: { tool_calls: { id: string }[] } }[] })
      .choices[0]?.message;
    const toolCalls = reply?.tool_calls ?? [];
    expect(toolCalls).toHaveLength(1);
    let turns = await storedTurns(id);
    expectDense(turns);
    expect(turns.map((turn) => [turn.role, turn.content])).toEqual([
      ['system', system.content],
      ['user', question.content],
      ['assistant', null],
    ]);
    expect(turns[2]?.toolCalls).toEqual(toolCalls);
    // Every call reached the endpoint; only the last was accepted.
    expect(h.double.requests.length - calls).toBe(7);

    // The same successful call again: refused as stale history, nothing duplicated.
    const again = await chat(id, { model: 'm', messages: [system, question] });
    expect(again.status).toBe(400);
    expect(await storedTurns(id)).toEqual(turns);

    // The conversation goes on from the stored reply; a failed next call leaves the stored part alone.
    const next = [
      system,
      question,
      { role: 'assistant', content: null, tool_calls: toolCalls },
      { role: 'tool', tool_call_id: toolCalls[0]?.id, content: 'value 4' },
    ];
    h.double.fail({ kind: 'status', status: 502 });
    expect((await chat(id, { model: 'm', messages: next })).status).toBe(502);
    expect(await storedTurns(id)).toEqual(turns);
    const recovered = await chat(id, { model: 'm', messages: next });
    expect(recovered.status).toBe(200);
    turns = await storedTurns(id);
    expectDense(turns);
    expect(turns.map((turn) => [turn.role, turn.content])).toEqual([
      ['system', system.content],
      ['user', question.content],
      ['assistant', null],
      ['tool', 'value 4'],
      ['assistant', 'value 4'],
    ]);
    // Two calls were answered 200 (`ok`, `recovered`).
    await expectNothingLost(testContext, id, 2);
  });

  it('stores a streamed exchange only when the stream completed', async (testContext) => {
    const id = await startTrajectory();
    h.double.fail({ kind: 'status', status: 429, body: { error: { message: 'slow down' } } });
    const refused = await chat(id, { model: 'm', stream: true, messages: [system, context(1), question] });
    expect(refused.status).toBe(429);
    await refused.text();
    expect(await storedTurns(id)).toEqual([]);
    const streamed = await chat(id, { model: 'm', stream: true, messages: [system, question] });
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toMatch(/data: \[DONE\]\n\n$/);
    const turns = await storedTurns(id);
    expectDense(turns);
    expect(turns.map((turn) => turn.role)).toEqual(['system', 'user', 'assistant']);
    await expectNothingLost(testContext, id, 1);
  });
});
