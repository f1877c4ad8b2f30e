// Who writes a trajectory, through the edge's routes (docs/edge.md, "Who writes a trajectory"): a
// rollout's trajectory is refused to the proxy and the finish route before any upstream call (the
// hole a hostile client found: any API key plus a trajectory id from GET /v1/groups wrote a running
// episode); a client trajectory takes only its key, in the header or as its trajectory URL, where the
// key alone authenticates; a row opened before keys still takes its id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeHarness, startEdgeHarness } from './support/edge-harness.ts';

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base' });
});
afterAll(async () => {
  await h?.close();
});

const messages = [{ role: 'user', content: 'Find the value of key ab.' }];

interface Started {
  readonly trajectory: { id: string };
  readonly key: string;
  readonly baseURL: string;
}

async function startClient(): Promise<Started> {
  const response = await h.api('/v1/trajectories', { json: { env: 'my-agent' } });
  expect(response.status).toBe(201);
  return (await response.json()) as Started;
}

/** A rollout's slot as POST /v1/rollouts writes it (no episode is dispatched, so nothing runs it). */
async function rolloutSlot(): Promise<string> {
  const task = await h.store.upsertTask({
    env: 'multi-hop',
    key: `t-${crypto.randomUUID()}`,
    input: { q: 1 },
  });
  const { trajectories } = await h.store.startGroup({
    taskId: task.id,
    size: 1,
    slots: [{ metadata: { slot: 0, settings: {} } }],
    awaitRunnerSeconds: 60,
  });
  return (trajectories[0] as { id: string }).id;
}

function chat(header: string | undefined) {
  return h.api('/v1/chat/completions', {
    json: { model: 'm', messages },
    headers: header === undefined ? {} : { 'x-edgerl-trajectory': header },
  });
}

async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, code: body.error.code, message: body.error.message };
}

describe("a rollout's trajectory", () => {
  it('is refused to the proxy (400) before the upstream is called, and to the finish route (409)', async () => {
    const id = await rolloutSlot();
    const calls = h.double.requests.length;
    const response = await chat(id);
    // A refusal that will not change: openai-node reads this before its own status rules, and on the
    // OpenAI-compatible routes it is a 400, which no SDK retries (the AI SDK retries a 409).
    expect(response.headers.get('x-should-retry')).toBe('false');
    const refused = await errorOf(response);
    expect(refused).toMatchObject({ status: 400, code: 'trajectory-owned' });
    expect(refused.message).toContain('written only by its rollout runner');
    expect(refused.message).toContain('POST /v1/trajectories');
    expect(h.double.requests.length).toBe(calls);
    const finish = await h.api(`/v1/trajectories/${id}/finish`, { json: { status: 'finished', reward: 1 } });
    expect(await errorOf(finish)).toMatchObject({ status: 409, code: 'trajectory-owned' });
    const { trajectory, turns } = await h.store.getTrajectory(id);
    expect(trajectory).toMatchObject({ status: 'running', verifierReward: null, turnCount: 0 });
    expect(turns).toEqual([]);
  });

  it('is refused by its trajectory URL too: a key made up for it opens nothing', async () => {
    const id = await rolloutSlot();
    const forged = `${id}.${'A'.repeat(43)}`;
    const calls = h.double.requests.length;
    const response = await fetch(`${h.edge.url}/t/${forged}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages }),
    });
    expect(await errorOf(response)).toMatchObject({ status: 400, code: 'trajectory-owned' });
    expect(h.double.requests.length).toBe(calls);
  });
});

describe("a client's trajectory", () => {
  it('returns its key and baseURL once, and refuses the proxy without the key or with another', async () => {
    const started = await startClient();
    const { id } = started.trajectory;
    expect(started.key).toMatch(new RegExp(`^${id}\\.[A-Za-z0-9_-]{43}$`));
    expect(started.baseURL).toBe(`${h.edge.url}/t/${started.key}/v1`);
    // Never shown again: not in the row a read returns, nor its digest, in any answer.
    const read = JSON.stringify(await (await h.api(`/v1/trajectories/${id}`)).json());
    expect(read).not.toContain(started.key);
    expect(read).not.toMatch(/keyDigest|key_digest/);
    expect(JSON.stringify(started)).not.toMatch(/keyDigest|key_digest/);
    const calls = h.double.requests.length;
    const bare = await errorOf(await chat(id));
    expect(bare).toMatchObject({ status: 403, code: 'trajectory-key' });
    expect(bare.message).toContain('x-edgerl-trajectory');
    const wrong = await errorOf(await chat(`${id}.${'x'.repeat(43)}`));
    expect(wrong).toMatchObject({ status: 403, code: 'trajectory-key' });
    expect(h.double.requests.length).toBe(calls);
    const finish = await h.api(`/v1/trajectories/${id}/finish`, { json: { status: 'finished', reward: 1 } });
    expect(await errorOf(finish)).toMatchObject({ status: 403, code: 'trajectory-key' });
    expect((await h.store.getTrajectory(id)).trajectory).toMatchObject({ status: 'running', turnCount: 0 });
  });

  it('records a call with the key in the header, and finishes with it', async () => {
    const { trajectory, key } = await startClient();
    const reply = await chat(key);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-edgerl-trajectory')).toBe(trajectory.id);
    const finish = await h.api(`/v1/trajectories/${trajectory.id}/finish`, {
      json: { status: 'finished', reward: 1 },
      headers: { 'x-edgerl-trajectory': key },
    });
    expect(finish.status).toBe(200);
    expect((await h.store.getTrajectory(trajectory.id)).trajectory).toMatchObject({
      status: 'finished',
      verifierReward: 1,
      turnCount: 2,
    });
  });

  it('records through its baseURL alone, whatever bearer an SDK sends, and finishes there', async () => {
    const { trajectory, baseURL, key } = await startClient();
    const reply = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-not-an-edge-key' },
      body: JSON.stringify({ model: 'm', messages }),
    });
    expect(reply.status).toBe(200);
    const { turns } = await h.store.getTrajectory(trajectory.id);
    expect(turns.map((turn) => turn.role)).toEqual(['user', 'assistant']);
    // The URL writes that one trajectory only: no other route is served under it.
    const other = await fetch(`${h.edge.url}/t/${key}/v1/trajectories`, {
      headers: { authorization: 'Bearer x' },
    });
    expect(other.status).toBe(404);
    expect(await other.text()).not.toContain(key);
    const finish = await fetch(`${h.edge.url}/t/${key}/finish`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'finished', reward: 0.5 }),
    });
    expect(finish.status).toBe(200);
    expect((await h.store.getTrajectory(trajectory.id)).trajectory).toMatchObject({
      status: 'finished',
      verifierReward: 0.5,
    });
  });

  it('refuses a trajectory URL without a key, or with a wrong one, before the upstream is called', async () => {
    const { trajectory } = await startClient();
    const calls = h.double.requests.length;
    for (const segment of [trajectory.id, `${trajectory.id}.${'B'.repeat(43)}`, 'nonsense']) {
      const response = await fetch(`${h.edge.url}/t/${segment}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages }),
      });
      expect(await errorOf(response)).toMatchObject({ status: 403, code: 'trajectory-key' });
    }
    expect(h.double.requests.length).toBe(calls);
  });

  it('opened before keys (no key digest stored) still takes its id alone', async () => {
    const { id } = await h.store.startTrajectory({ env: 'my-agent' });
    expect((await chat(id)).status).toBe(200);
    const finish = await h.api(`/v1/trajectories/${id}/finish`, { json: { status: 'finished' } });
    expect(finish.status).toBe(200);
  });
});

describe('an uploaded trajectory', () => {
  it('is refused to the proxy and the finish route', async () => {
    const uploaded = await h.api('/v1/trajectories', {
      json: { key: `u-${crypto.randomUUID()}`, env: 'my-agent', status: 'finished', turns: messages },
    });
    const body = (await uploaded.json()) as { trajectories?: { trajectoryId: string }[] };
    const id = body.trajectories?.[0]?.trajectoryId;
    expect(id, JSON.stringify(body)).toBeDefined();
    const calls = h.double.requests.length;
    expect(await errorOf(await chat(id))).toMatchObject({ status: 400, code: 'trajectory-owned' });
    expect(h.double.requests.length).toBe(calls);
    const finish = await h.api(`/v1/trajectories/${id}/finish`, { json: { status: 'finished', reward: 1 } });
    expect(await errorOf(finish)).toMatchObject({ status: 409, code: 'trajectory-owned' });
  });
});
