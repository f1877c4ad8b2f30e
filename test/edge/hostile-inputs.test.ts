// Hostile inputs to the Node edge (issue 16, item 8): each gets a 4xx that names the field, no 500,
// and a refused request writes no row (tasks, groups, trajectories and turns are counted around it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rolloutGroups } from '../../db/schema/rollout-groups.ts';
import { tasks } from '../../db/schema/tasks.ts';
import { trajectories } from '../../db/schema/trajectories.ts';
import { turns } from '../../db/schema/turns.ts';
import { type EdgeHarness, startEdgeHarness } from './support/edge-harness.ts';
import { TrajectoryKeys } from '../support/trajectory-keys.ts';

const keys = new TrajectoryKeys();

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness();
});
afterAll(async () => {
  await h?.close();
});

async function rowCounts() {
  const db = h.store.db;
  return {
    tasks: await db.$count(tasks),
    groups: await db.$count(rolloutGroups),
    trajectories: await db.$count(trajectories),
    turns: await db.$count(turns),
  };
}

interface Refusal {
  readonly status: number;
  readonly code: string;
  readonly field?: string;
  readonly message: string;
}

/** Sends the request, checks that it wrote nothing, and returns the error it got. */
async function refused(path: string, init: RequestInit & { json?: unknown }): Promise<Refusal> {
  const before = await rowCounts();
  const response = await h.api(path, init);
  const body = (await response.json()) as { error: Omit<Refusal, 'status'> };
  expect(await rowCounts()).toEqual(before);
  return { status: response.status, ...body.error };
}

function rawPost(body: string): RequestInit {
  return { method: 'POST', body, headers: { 'content-type': 'application/json' } };
}

/** `{"a": [[[…]]]}` with `depth` nested arrays: two bytes a level, so 20,000 fit the body limits. */
function deepMetadata(depth: number): string {
  return `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

/** An object nested `depth` levels, built without recursion. */
function nestedObject(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
}

async function startTrajectoryId(): Promise<string> {
  const response = await h.api('/v1/trajectories', { json: { env: 'multi-hop' } });
  expect(response.status).toBe(201);
  return keys.remember(await response.json());
}

describe('event stream positions beyond a Postgres integer', () => {
  it('refuses ?after=3000000000 with a 400 naming `after`', async () => {
    const id = await startTrajectoryId();
    const error = await refused(`/v1/trajectories/${id}/events?after=3000000000`, {});
    expect(error).toMatchObject({ status: 400, code: 'invalid-request', field: 'after' });
  });

  it('refuses Last-Event-ID: 3000000000 with a 400 naming `last-event-id`', async () => {
    const id = await startTrajectoryId();
    const error = await refused(`/v1/trajectories/${id}/events`, {
      headers: { 'last-event-id': '3000000000' },
    });
    expect(error).toMatchObject({ status: 400, code: 'invalid-request', field: 'last-event-id' });
  });

  it('still accepts the largest integer (a stream with nothing after it)', async () => {
    const id = await startTrajectoryId();
    const finished = await h.api(`/v1/trajectories/${id}/finish`, {
      json: { status: 'finished' },
      headers: keys.header(id),
    });
    expect(finished.status).toBe(200);
    const response = await h.api(`/v1/trajectories/${id}/events?after=${2 ** 31 - 1}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('event: end');
  });
});

describe('metadata nested 20,000 deep', () => {
  const deep = deepMetadata(20_000);
  const bodies: [string, string][] = [
    ['/v1/trajectories', `{"env":"multi-hop","metadata":${deep}}`],
    ['/v1/rollouts', `{"env":"multi-hop","groupSize":2,"metadata":${deep}}`],
    ['/v1/groups', `{"env":"multi-hop","groupSize":2,"metadata":${deep}}`],
  ];
  for (const [path, body] of bodies) {
    it(`POST ${path}: 400 naming metadata`, async () => {
      const error = await refused(path, rawPost(body));
      expect(error).toMatchObject({ status: 400, code: 'invalid-request', field: 'metadata' });
      expect(error.message).toMatch(/nested deeper than 64 levels/);
    });
  }

  it('accepts metadata 40 levels deep, and stores it whole', async () => {
    const response = await h.api('/v1/trajectories', {
      json: { env: 'multi-hop', metadata: { deep: nestedObject(40) } },
    });
    expect(response.status).toBe(201);
    const { trajectory } = (await response.json()) as { trajectory: { id: string } };
    const stored = await h.store.getTrajectory(trajectory.id);
    expect(stored.trajectory.metadata.deep).toEqual(nestedObject(40));
  });
});

describe('a rollout refused after its task is chosen', () => {
  for (const path of ['/v1/rollouts', '/v1/groups']) {
    it(`POST ${path} with an unknown policy leaves no task row`, async () => {
      const error = await refused(path, {
        json: { env: 'multi-hop', groupSize: 2, taskSeed: 4242, policy: 'no-such-policy' },
      });
      expect(error).toMatchObject({ status: 400, field: 'policy' });
    });

    it(`POST ${path} with metadata Postgres cannot hold leaves no task row`, async () => {
      const error = await refused(path, {
        json: { env: 'multi-hop', groupSize: 2, taskSeed: 4343, metadata: { note: 'a\u0000b' } },
      });
      expect(error).toMatchObject({ status: 400, code: 'invalid-request', field: 'metadata.note' });
    });
  }
});

describe('unknown keys inside settings', () => {
  for (const path of ['/v1/rollouts', '/v1/groups']) {
    it(`POST ${path}: 400 naming settings.<key>`, async () => {
      const error = await refused(path, {
        json: { env: 'multi-hop', groupSize: 2, settings: { temperature: 0.5, topK: 40 } },
      });
      expect(error).toMatchObject({ status: 400, code: 'invalid-request', field: 'settings.topK' });
    });
  }
});

describe('text Postgres cannot hold', () => {
  const postgresWords =
    /unsupported Unicode|cannot be converted to text|invalid byte sequence|surrogate must/i;
  const cases: [string, unknown, string][] = [
    ['a NUL in a metadata value', { x: 'before\u0000after' }, 'metadata.x'],
    ['a NUL in a metadata key', { 'k\u0000': 1 }, 'metadata.k\u0000'],
    ['a lone high surrogate', { x: ['ok', 'a\uD800b'] }, 'metadata.x.1'],
    ['a lone low surrogate', { y: { z: '\uDC00' } }, 'metadata.y.z'],
  ];
  for (const [what, metadata, field] of cases) {
    it(`${what}: 400 naming ${JSON.stringify(field)}, not Postgres's message`, async () => {
      const error = await refused('/v1/trajectories', { json: { env: 'multi-hop', metadata } });
      expect(error).toMatchObject({ status: 400, code: 'invalid-request', field });
      expect(error.message).not.toMatch(postgresWords);
    });
  }

  it('keeps a well-formed surrogate pair (an emoji)', async () => {
    const response = await h.api('/v1/trajectories', { json: { env: 'multi-hop', metadata: { x: '😀' } } });
    expect(response.status).toBe(201);
  });

  it("a model's turn with a NUL is stored (escaped), not refused: test/edge/unstorable-text.test.ts", async () => {
    const trajectoryId = await startTrajectoryId();
    // Appended as the trajectory's client, with its key (docs/edge.md, "Who writes a trajectory").
    await h.store.appendTurns(
      [{ trajectoryId, index: 0, role: 'assistant', content: 'x\u0000y' }],
      keys.storeAccess(trajectoryId),
    );
    expect((await h.store.getTrajectory(trajectoryId)).turns[0]?.content).toBe('x\u0000y');
  });
});
