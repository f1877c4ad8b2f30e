// Fault scenario: the store unreachable mid-episode. A real `edgerl edge` process reaches Postgres only
// through a TCP proxy this test starts (support/tcp-proxy.ts); while episodes run against the inference
// double, the proxy is cut for a few seconds (live connections destroyed, new ones refused), then
// restored. What the edge does about it: the episode loop retries each store write (appends are
// idempotent by index), then gives the episode back to the queue (EpisodeInterrupted, the in-process
// queue's redelivery, edge/rollouts/store-trajectory-sink.ts and consume-episode.ts), whose next
// delivery resumes from the stored turns. Checks: every episode ends (finished, or `error` with a
// reason), every reply the model gave outside the cut is stored once, nothing is left `running`, and
// the edge process still serves (a new rollout finishes).
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../db/drivers/open-store.ts';
import type { Store } from '../../db/store.ts';
import { type InferenceDouble, startInferenceDouble } from '../edge/support/inference-double.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';
import { spawnEdge } from '../support/spawn-edge.ts';
import { countEpisodeFaults } from './support/count-episode-faults.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

const apiKey = 'store-cut-key';
/** How long the store stays unreachable: longer than one write's retries, shorter than the queue's. */
const cutMs = 3_000;
/** Each model answer takes this long, so episodes are mid-way when the line is cut. */
const answerMs = 150;

let database: TestDatabase | undefined;
let proxy: TcpProxy | undefined;
let double: InferenceDouble | undefined;
let observer: Store | undefined;
let edge: { child: ChildProcess; url: string; output(): string } | undefined;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function api(path: string, body?: unknown): Promise<Response> {
  return fetch(`${edge?.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(20_000),
  });
}

/** Polls the store directly (not through the proxy) until `done` holds; throws naming what it waited for. */
async function waitFor(what: string, done: () => Promise<boolean>, limitMs = 90_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await done())) {
    if (Date.now() > deadline)
      throw new Error(`gave up waiting for ${what}; edge output:\n${edge?.output()}`);
    await sleep(100);
  }
}

async function storedTurns(groupId: string): Promise<number> {
  const { rows } = await (observer as Store).sql.query(
    'select count(*)::int from turns t join trajectories j on j.id = t.trajectory_id where j.group_id = $1',
    [groupId],
  );
  return Number(rows[0]?.[0]);
}

async function storedAssistantTurns(groupId: string): Promise<number> {
  const { rows } = await (observer as Store).sql.query(
    `select count(*)::int from turns t join trajectories j on j.id = t.trajectory_id
     where j.group_id = $1 and t.role = 'assistant'`,
    [groupId],
  );
  return Number(rows[0]?.[0]);
}

async function groupEnded(groupId: string): Promise<boolean> {
  return (await (observer as Store).getGroup({ groupId })).group.status !== 'running';
}

// The embedded store lives inside the edge's own process (PGlite), so there is no connection to cut:
// this needs the Postgres server of the suite's server pass (EDGERL_TEST_DATABASE_URL).
describe.skipIf(!testServerUrl)('the store unreachable mid-episode', () => {
  beforeAll(async () => {
    database = await createTestDatabase(testServerUrl as string);
    // A server store is migrated by whoever deploys it, not by the edge: do it here.
    await (await openStore({ url: database.url, migrations: 'apply' })).close();
    observer = await openStore({ url: database.url });
    const direct = new URL(database.url);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    double = await startInferenceDouble({ delayMs: answerMs });
    edge = await spawnEdge([
      '--database-url',
      proxied.toString(),
      '--api-key',
      apiKey,
      '--inference-url',
      double.baseUrl,
      '--default-model',
      'tiny-base',
      '--concurrency',
      '4',
    ]);
  }, 120_000);

  afterAll(async () => {
    if (edge && edge.child.exitCode === null && edge.child.signalCode === null) {
      edge.child.kill('SIGKILL');
      await once(edge.child, 'exit');
    }
    await proxy?.close();
    await double?.close();
    await observer?.close();
    await database?.drop();
  });

  it('episodes cut off from the store end, keep every reply once, and the edge goes on serving', async (context) => {
    const running = double as InferenceDouble;
    const line = proxy as TcpProxy;
    const started = await api('/v1/rollouts', { env: 'multi-hop', groupSize: 4, taskSeed: 61 });
    expect(started.status).toBe(202);
    const { groupId, trajectoryIds } = (await started.json()) as { groupId: string; trajectoryIds: string[] };

    // Cut once the episodes are under way, at a moment when every reply given so far is stored (the
    // endpoint holds its answers meanwhile): those are the replies "before the cut". The held answers
    // then go out while the store is away.
    await waitFor('turns before the cut', async () => (await storedTurns(groupId)) >= 10);
    running.pause();
    await waitFor('the replies so far to be stored', async () => {
      return (await storedAssistantTurns(groupId)) === running.replies.length;
    });
    const beforeCut = running.replies.length;
    await line.cut();
    running.resume();
    await sleep(cutMs / 2);
    // The edge itself still answers while its store is away.
    expect((await api('/health')).status).toBe(200);
    await sleep(cutMs / 2);
    const atRestore = running.replies.length;
    await line.restore();

    await waitFor('the group to end', () => groupEnded(groupId));
    const outcome = await countEpisodeFaults(observer as Store, { trajectoryIds });
    let { lostTurns, duplicates, leaks } = outcome.outcome;
    const found = [...outcome.found];

    // Replies the edge got outside the cut must each be stored once; one that arrived while the store
    // was away may be lost with its write and asked for again on redelivery.
    const outside = [...running.replies.slice(0, beforeCut), ...running.replies.slice(atRestore)];
    const stored = new Map<string, number>();
    let storedAssistant = 0;
    let storedAnswers = 0;
    for (const id of trajectoryIds) {
      const { trajectory, turns } = await (observer as Store).getTrajectory(id);
      // The cut is shorter than the queue's redeliveries (1 + 2 + 4 s), so every episode resumes and
      // finishes; one that did not would say why (`error`, a reason naming the store).
      expect([trajectory.status, trajectory.errorReason, trajectory.verifierReward], id).toEqual([
        'finished',
        null,
        1,
      ]);
      for (const turn of turns.filter((one) => one.role === 'assistant')) {
        storedAssistant += 1;
        if (!turn.toolCalls?.length) storedAnswers += 1;
        for (const call of turn.toolCalls ?? []) stored.set(call.id, (stored.get(call.id) ?? 0) + 1);
      }
    }
    for (const reply of outside) {
      for (const call of reply.toolCallIds) {
        if (!stored.has(call)) {
          lostTurns += 1;
          found.push(`reply with tool call ${call} (outside the cut) not stored`);
        }
      }
    }
    const answersOutside = outside.filter((reply) => reply.toolCallIds.length === 0).length;
    if (answersOutside > storedAnswers) {
      lostTurns += answersOutside - storedAnswers;
      found.push(`${answersOutside} answers outside the cut, ${storedAnswers} stored`);
    }
    if (storedAssistant > running.replies.length) {
      duplicates += storedAssistant - running.replies.length;
      found.push(`${storedAssistant} assistant turns stored from ${running.replies.length} replies`);
    }

    // The edge process is alive and serves: a new rollout on the restored store finishes.
    if (edge?.child.exitCode !== null) {
      leaks += 1;
      found.push(`the edge exited: ${edge?.output()}`);
    }
    const after = await api('/v1/rollouts', { env: 'multi-hop', groupSize: 2, taskSeed: 62 });
    expect(after.status).toBe(202);
    const next = (await after.json()) as { groupId: string; trajectoryIds: string[] };
    await waitFor('the next group to end', () => groupEnded(next.groupId));
    const nextCount = await countEpisodeFaults(observer as Store, { trajectoryIds: next.trajectoryIds });
    lostTurns += nextCount.outcome.lostTurns;
    duplicates += nextCount.outcome.duplicates;
    leaks += nextCount.outcome.leaks;
    found.push(...nextCount.found);
    for (const id of next.trajectoryIds)
      expect((await (observer as Store).getTrajectory(id)).trajectory.status).toBe('finished');

    // And it still stops cleanly (its pool's broken connections were dropped, none is left hanging).
    const child = (edge as { child: ChildProcess }).child;
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) {
      leaks += 1;
      found.push(`the edge exited ${code} on SIGINT: ${edge?.output()}`);
    }

    const counted = { lostTurns, duplicates, leaks };
    recordFaultOutcome(context, counted);
    expect(counted, found.join('; ')).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
    // The cut was real: it interrupted an episode (redelivered), and the edge had to connect again.
    expect(edge?.output()).toMatch(/delivery 1 failed; retrying/);
    expect(line.connections).toBeGreaterThan(1);
  }, 180_000);
});
