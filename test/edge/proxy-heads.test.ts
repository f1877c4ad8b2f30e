// The recording proxy's kept heads (edge/proxy/trajectory-heads.ts) when two edges record the same
// trajectory, so each edge's head goes stale while the other stores turns: every turn is stored once
// and in order, the latest request's tools win, a trajectory finished through one edge is refused by
// the other with the same refusal, and a rewritten history is refused naming the message, as by an edge
// that kept no head.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEdge, startEdge } from '../../edge/runtime/node.ts';
import { historyDigests, historyEntry } from '../../protocol/history-digest.ts';
import { type EdgeHarness, startEdgeHarness, testApiKey } from './support/edge-harness.ts';
import { TrajectoryKeys } from '../support/trajectory-keys.ts';

const keys = new TrajectoryKeys();

let h: EdgeHarness;
let other: RunningEdge;

beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base' });
  other = await startEdge({
    config: {
      upstream: { baseUrl: h.double.baseUrl, requestTokenIds: true, timeoutMs: 10_000 },
      apiKeys: [testApiKey],
      defaultModel: 'tiny-base',
      episodeConcurrency: 1,
      policyTimeoutMs: 10_000,
    },
    port: 0,
    store: h.store,
    resumeUnfinished: false,
  });
});
afterAll(async () => {
  await other?.close();
  await h?.close();
});

type Message = Record<string, unknown> & { role: string };
type Edge = 'first' | 'second';

async function call(edge: Edge, path: string, body: unknown, headers: Record<string, string> = {}) {
  const url = edge === 'first' ? h.edge.url : other.url;
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${testApiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function startTrajectory(edge: Edge): Promise<string> {
  const response = await call(edge, '/v1/trajectories', { env: 'my-agent' });
  expect(response.status).toBe(201);
  return keys.remember(await response.json());
}

async function chat(
  edge: Edge,
  id: string,
  messages: readonly Message[],
  extra: Record<string, unknown> = {},
) {
  const response = await call(
    edge,
    '/v1/chat/completions',
    { model: 'whatever', messages, ...extra },
    keys.header(id),
  );
  const body = (await response.json()) as {
    choices?: { message: Message }[];
    error?: { code: string; field?: string; message: string };
  };
  return { status: response.status, body, reply: body.choices?.[0]?.message };
}

const opening: Message[] = [
  { role: 'system', content: 'You follow keys.' },
  { role: 'user', content: 'Find the value of key ab.' },
];

describe('two edges recording one trajectory', () => {
  it('stores every turn once and in order, whichever edge each call reaches', async () => {
    const id = await startTrajectory('first');
    let messages = [...opening];
    const edges: Edge[] = ['first', 'first', 'second', 'first', 'second', 'second', 'first'];
    for (const [step, edge] of edges.entries()) {
      const { status, reply } = await chat(edge, id, messages);
      expect(status).toBe(200);
      messages = [...messages, reply as Message, { role: 'user', content: `step ${step}` }];
    }
    const { trajectory, turns } = await h.store.getTrajectory(id);
    // Each call stored its new messages and its reply; the last user message is not sent yet.
    expect(turns.map((turn) => [turn.role, turn.content ?? ''])).toEqual(
      messages.slice(0, -1).map((message) => [message.role, (message.content as string | null) ?? '']),
    );
    expect(trajectory.turnCount).toBe(turns.length);
    const replies = turns.filter((turn) => turn.role === 'assistant');
    expect(replies).toHaveLength(edges.length);
    expect(trajectory.completionTokenCount).toBe(
      replies.reduce((sum, turn) => sum + (turn.completionTokenIds?.length ?? 0), 0),
    );
    const chain = historyDigests(
      turns.map((turn) =>
        historyEntry({ role: turn.role, content: turn.content, toolCallId: turn.toolCallId }),
      ),
    );
    expect(turns.map((turn) => turn.historyDigest)).toEqual(chain);
  });

  it("keeps the latest request's tools when the other edge changed them in between", async () => {
    const tool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } });
    const id = await startTrajectory('first');
    const first = await chat('first', id, opening, { tools: [tool('a')] });
    let messages = [...opening, first.reply as Message, { role: 'user', content: 'more' }];
    const second = await chat('second', id, messages, { tools: [tool('b')] });
    expect((await h.store.getTrajectory(id)).trajectory.tools).toEqual([tool('b')]);
    messages = [...messages, second.reply as Message, { role: 'user', content: 'again' }];
    // The first edge's head still says [a], as this request does: the stored [b] must be replaced.
    expect((await chat('first', id, messages, { tools: [tool('a')] })).status).toBe(200);
    expect((await h.store.getTrajectory(id)).trajectory.tools).toEqual([tool('a')]);
  });

  it('refuses a call on a trajectory the other edge finished, with the same 400 conflict, storing nothing', async () => {
    const id = await startTrajectory('first');
    const first = await chat('first', id, opening);
    const finished = await call(
      'second',
      `/v1/trajectories/${id}/finish`,
      { status: 'finished' },
      keys.header(id),
    );
    expect(finished.status).toBe(200);
    const messages = [...opening, first.reply as Message, { role: 'user', content: 'more' }];
    const refused = await chat('first', id, messages);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      code: 'conflict',
      message: `trajectory ${id} is finished; it takes no more turns`,
    });
    expect((await h.store.getTrajectory(id)).turns).toHaveLength(3);
    // Through the edge that finished it, refused before the upstream call, with the same answer.
    const calls = h.double.requests.length;
    const there = await chat('second', id, messages);
    expect(there.body.error).toEqual(refused.body.error);
    expect(h.double.requests.length).toBe(calls);
  });

  it('refuses a rewritten history through a stale head, naming the message, as without a head', async () => {
    const id = await startTrajectory('first');
    const first = await chat('first', id, opening);
    let messages = [...opening, first.reply as Message, { role: 'user', content: 'more' }];
    const second = await chat('second', id, messages);
    messages = [...messages, second.reply as Message, { role: 'user', content: 'again' }];
    // Rewrites the reply the second edge stored (turn 4), unknown to the first edge's head.
    const rewritten = messages.map((message, index) =>
      index === 4 ? { ...message, content: 'no' } : message,
    );
    const refused = await chat('first', id, rewritten);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'conflict', field: 'messages.4' });
    // Rewriting what the first edge's head covers (turn 1) is refused before the upstream call.
    const calls = h.double.requests.length;
    const early = messages.map((message, index) => (index === 1 ? { ...message, content: 'no' } : message));
    expect((await chat('first', id, early)).body.error).toMatchObject({ field: 'messages.1' });
    expect(h.double.requests.length).toBe(calls);
    expect((await h.store.getTrajectory(id)).turns).toHaveLength(5);
  });
});
