// POST /v1/trajectories with turns: whole recorded episodes through the edge, one or many, on the
// same route as a start; retries are no-ops, refusals are 4xx naming the field as sent, and a refused
// request writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../support/fixtures.ts';
import { type EdgeHarness, startEdgeHarness } from './support/edge-harness.ts';

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ limits: { trajectoryBodyBytes: 2048, ingestBodyBytes: 16 * 1024 } });
});
afterAll(async () => {
  await h?.close();
});

interface Ingested {
  trajectories: { key: string | null; trajectoryId: string; created: boolean; turnCount: number }[];
  createdTrajectories: number;
  createdTurns: number;
}

function episode(key: string, extra: Record<string, unknown> = {}) {
  return {
    key,
    env: 'recorded',
    verifierReward: 1,
    turns: [
      { role: 'user', content: 'What is 2 + 2?' },
      {
        role: 'assistant',
        content: '4',
        completionTokenIds: [19, 151645],
        completionLogprobs: [-0.25, -1.5e-7],
      },
    ],
    ...extra,
  };
}

async function errorOf(response: Response) {
  const { error } = (await response.json()) as { error: { code: string; field?: string; message: string } };
  return { status: response.status, ...error };
}

async function storedWithKey(key: string): Promise<number> {
  const result = await h.store.sql.query('select count(*) from trajectories where ingest_key = $1', [key]);
  return Number(result.rows[0]?.[0]);
}

describe('POST /v1/trajectories with turns', () => {
  it('stores one episode (201, Location), and answers a retry with 200 and the same trajectory', async () => {
    const key = uniqueName('one');
    const response = await h.api('/v1/trajectories', { json: episode(key) });
    expect(response.status).toBe(201);
    const body = (await response.json()) as Ingested;
    const id = body.trajectories[0]?.trajectoryId;
    expect(response.headers.get('location')).toBe(`/v1/trajectories/${id}`);
    expect(body).toMatchObject({ createdTrajectories: 1, createdTurns: 2 });
    const read = (await (await h.api(`/v1/trajectories/${id}`)).json()) as {
      trajectory: { status: string; verifierReward: number };
      turns: { completionLogprobs: number[] | null }[];
    };
    expect(read.trajectory).toMatchObject({ status: 'finished', verifierReward: 1 });
    expect(read.turns[1]?.completionLogprobs).toEqual([-0.25, -1.5e-7]);
    const retry = await h.api('/v1/trajectories', { json: episode(key) });
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as Ingested).trajectories[0]).toMatchObject({
      trajectoryId: id,
      created: false,
    });
  });

  it('stores a group of recorded samples of one task, which a trainer can then claim', async () => {
    const task = await h.store.upsertTask({ env: 'recorded', key: uniqueName('task'), input: { q: 1 } });
    const group = { key: uniqueName('group'), size: 2 };
    const sample = (reward: number) =>
      episode(uniqueName('sample'), { env: undefined, taskId: task.id, group, verifierReward: reward });
    const response = await h.api('/v1/trajectories', { json: { episodes: [sample(1), sample(0)] } });
    expect(response.status).toBe(201);
    const body = (await response.json()) as Ingested & { groups: { groupId: string; complete: boolean }[] };
    expect(body.groups).toEqual([
      { key: group.key, groupId: expect.any(String), members: 2, size: 2, complete: true },
    ]);
    const read = (await (await h.api(`/v1/groups/${body.groups[0]?.groupId}`)).json()) as {
      group: { status: string; taskId: string };
      trajectories: unknown[];
    };
    expect(read.group).toMatchObject({ status: 'complete', taskId: task.id });
    expect(read.trajectories).toHaveLength(2);
    // A grouped episode needs its key (a retry must not add a member): named as sent.
    const keyless = await h.api('/v1/trajectories', {
      json: { ...sample(1), key: undefined, group: { key: uniqueName('group'), size: 2 } },
    });
    expect(await errorOf(keyless)).toMatchObject({ status: 400, field: 'key' });
  });

  it('stores many episodes in one request', async () => {
    const keys = [uniqueName('many'), uniqueName('many'), uniqueName('many')];
    const response = await h.api('/v1/trajectories', { json: { episodes: keys.map((key) => episode(key)) } });
    expect(response.status).toBe(201);
    const body = (await response.json()) as Ingested;
    expect(body.trajectories.map((item) => item.key)).toEqual(keys);
    for (const key of keys) expect(await storedWithKey(key)).toBe(1);
  });

  it('refuses a bad episode naming the field as sent, and writes nothing of the request', async () => {
    const key = uniqueName('bad');
    const cases: [unknown, number, string][] = [
      [
        episode(key, {
          turns: [
            { role: 'user', content: 'x' },
            { role: 'robot', content: 'y' },
          ],
        }),
        400,
        'turns.1.role',
      ],
      [episode(key, { colour: 'red' }), 400, 'colour'],
      [
        { episodes: [episode(key), episode(uniqueName('bad'), { turns: [{ role: 'tool', content: 'x' }] })] },
        400,
        'episodes.1.turns.0.toolCallId',
      ],
      [{ episodes: [episode(key, { colour: 'red' })] }, 400, 'episodes.0.colour'],
      [{ episodes: 'all of them' }, 400, 'episodes'],
      [{ episodes: [episode(key)], dryRun: true }, 400, 'dryRun'],
      [episode(key, { metadata: { note: 'a\u0000b' } }), 400, 'metadata.note'],
      [episode(key, { taskId: '00000000-0000-4000-8000-000000000000' }), 404, 'taskId'],
    ];
    for (const [json, status, field] of cases) {
      const error = await errorOf(await h.api('/v1/trajectories', { json }));
      expect({ status: error.status, field: error.field }, JSON.stringify(json).slice(0, 80)).toEqual({
        status,
        field,
      });
      expect(error.message).toMatch(new RegExp(`^${field.replaceAll('.', '\\.')}: `));
    }
    expect(await storedWithKey(key)).toBe(0);
  });

  it('refuses what no writer of turns may store (protocol/validate-turns.ts), naming the field', async () => {
    // A key per case, so that no case meets another's stored episode (a 409) where the rules are missing.
    const keys: string[] = [];
    const fresh = () => {
      keys.push(uniqueName('unsound'));
      return keys.at(-1) as string;
    };
    const call = (id: string) => ({ id, type: 'function', function: { name: 'search', arguments: '{}' } });
    const withAssistant = (extra: Record<string, unknown>) =>
      episode(fresh(), {
        turns: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: 'a', completionTokenIds: [1, 2], ...extra },
        ],
      });
    const cases: [unknown, string, RegExp][] = [
      [episode(fresh(), { verifierReward: 1e308 }), 'verifierReward', /must be in \[0, 1\], got 1e\+308/],
      [episode(fresh(), { verifierReward: -1 }), 'verifierReward', /must be in \[0, 1\]/],
      [withAssistant({ completionLogprobs: [-0.5, 5] }), 'turns.1.completionLogprobs.1', /must be ≤ 0/],
      [
        withAssistant({ completionLogprobs: [-1e308, -1] }),
        'turns.1.completionLogprobs.0',
        /must be ≥ -9999/,
      ],
      [withAssistant({ completionTokenIds: [1, 2 ** 31] }), 'turns.1.completionTokenIds.1', /token id/],
      [
        episode(fresh(), {
          turns: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: null, toolCalls: [call('a')] },
            { role: 'tool', content: 'r', toolCallId: 'b' },
          ],
        }),
        'turns.2.toolCallId',
        /answers no call of the assistant turn before it \(its calls: "a"\)/,
      ],
      [
        episode(fresh(), {
          turns: [
            { role: 'user', content: 'q' },
            { role: 'tool', content: 'r', toolCallId: 'a' },
          ],
        }),
        'turns.1.toolCallId',
        /a tool result with no call before it/,
      ],
      [
        episode(fresh(), {
          turns: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: 'a' },
            { role: 'assistant', content: 'b' },
          ],
        }),
        'turns.2.role',
        /an assistant turn right after another/,
      ],
      [
        { episodes: [episode(uniqueName('fine')), withAssistant({ completionLogprobs: [0.5, -1] })] },
        'episodes.1.turns.1.completionLogprobs.0',
        /must be ≤ 0/,
      ],
    ];
    // Every case answered, then compared at once: on a tree without the rules each one shows.
    const answers = [];
    for (const [json, field, message] of cases) {
      const error = await errorOf(await h.api('/v1/trajectories', { json }));
      answers.push({
        ...error,
        named: error.message?.startsWith(`${field}: `) && message.test(error.message),
      });
    }
    expect(answers).toEqual(
      cases.map(([, field]) => ({
        status: 400,
        code: 'invalid-request',
        field,
        message: expect.any(String),
        named: true,
      })),
    );
    for (const key of keys) expect(await storedWithKey(key)).toBe(0);
  });

  it('stores what the episode loop writes: system first, parallel calls answered, a final answer', async () => {
    const call = (id: string) => ({ id, type: 'function', function: { name: 'search', arguments: '{}' } });
    const response = await h.api('/v1/trajectories', {
      json: episode(uniqueName('loop'), {
        verifierReward: 0,
        turns: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [call('a'), call('b')],
          },
          { role: 'tool', content: 'r', toolCallId: 'b' },
          { role: 'tool', content: 'r', toolCallId: 'a', toolError: 'tool-timeout' },
          { role: 'assistant', content: '4', completionTokenIds: [19], completionLogprobs: [0] },
        ],
      }),
    });
    expect(response.status).toBe(201);
  });

  it('refuses a body that is not UTF-8 with the offset of its first bad byte, storing nothing', async () => {
    const key = uniqueName('latin1');
    const text = JSON.stringify(episode(key));
    // "café" in Latin-1: 0xE9 followed by a quote is no UTF-8 sequence.
    const at = text.indexOf('What');
    const body = new Uint8Array([
      ...new TextEncoder().encode(text.slice(0, at)),
      0x63,
      0x61,
      0x66,
      0xe9,
      ...new TextEncoder().encode(text.slice(at)),
    ]);
    const error = await errorOf(
      await h.api('/v1/trajectories', {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(error).toEqual({
      status: 400,
      code: 'invalid-request',
      field: 'body',
      message: `body: invalid UTF-8 at byte ${at + 3}`,
    });
    expect(await storedWithKey(key)).toBe(0);
  });

  it('answers 409 naming the key when another episode was stored under it', async () => {
    const key = uniqueName('taken');
    expect((await h.api('/v1/trajectories', { json: episode(key) })).status).toBe(201);
    const error = await errorOf(
      await h.api('/v1/trajectories', { json: episode(key, { verifierReward: 0 }) }),
    );
    expect(error).toMatchObject({ status: 409, code: 'conflict', field: 'key' });
    expect(error.message).toContain('verifierReward');
  });

  it('needs the API key, and holds bodies to their limits (episodes to the larger one)', async () => {
    const unauthorized = await fetch(`${h.edge.url}/v1/trajectories`, {
      method: 'POST',
      body: JSON.stringify(episode(uniqueName('anon'))),
    });
    expect(unauthorized.status).toBe(401);
    // 5 KiB of text: above the start limit (2 KiB) and below the ingest limit (16 KiB).
    const long = 'x'.repeat(5 * 1024);
    const fits = await h.api('/v1/trajectories', {
      json: episode(uniqueName('long'), { turns: [{ role: 'user', content: long }] }),
    });
    expect(fits.status).toBe(201);
    const startTooLarge = await errorOf(
      await h.api('/v1/trajectories', { json: { env: 'recorded', metadata: { long } } }),
    );
    expect(startTooLarge).toMatchObject({ status: 413, field: 'body' });
    const key = uniqueName('huge');
    const huge = await errorOf(
      await h.api('/v1/trajectories', {
        json: episode(key, { turns: [{ role: 'user', content: long.repeat(4) }] }),
      }),
    );
    expect(huge).toMatchObject({ status: 413, code: 'payload-too-large' });
    expect(await storedWithKey(key)).toBe(0);
    // A start without turns still starts a trajectory.
    expect((await h.api('/v1/trajectories', { json: { env: 'recorded' } })).status).toBe(201);
  });
});
