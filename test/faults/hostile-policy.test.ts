// Fault scenario: a hostile policy and a flooding client against a real `edgerl edge` process on a
// real Postgres (edgerl issue 31, item 3). The policy is a scripted upstream (HostilePolicyServer, a
// named double: no real model can be made to do this on purpose): one reply with 5,000 tool calls,
// and a 50 MB reply, whole and streamed, to the episode loop and to the recording proxy. Then a burst
// of 1,000 rollout groups of 4. Each ends as designed, with its reason: the calls past the bound get
// one refusal and the episode goes on; an oversized reply ends its episode `error` and is not stored;
// the burst's groups past the queue bound get 429 with Retry-After. The store is counted for lost,
// duplicated and leaked rows (count-episode-faults.ts), and the edge's memory is read from
// /proc/<pid>/status and printed beside the figures of the burst.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { openStore } from '../../db/drivers/open-store.ts';
import type { Store } from '../../db/store.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';
import { type SpawnedEdge, spawnEdge } from '../support/spawn-edge.ts';
import { TrajectoryKeys } from '../support/trajectory-keys.ts';
import { countEpisodeFaults } from './support/count-episode-faults.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { HostilePolicyServer } from './support/hostile-policy-server.ts';

const apiKey = 'hostile-key';
/** The reply bound the edge runs with: 256 KiB, so a body is read to at most 8 MiB (32 ×). */
const maxReplyBytes = 256 * 1024;
const maxToolCalls = 16;
const fiftyMb = 50 * 1024 * 1024;

let policy: HostilePolicyServer;
let database: TestDatabase;
let store: Store;
let edge: SpawnedEdge;

/** The edge process's resident memory now and its peak so far, in MiB (Linux /proc). */
async function memory(child: ChildProcess): Promise<{ rssMb: number; peakMb: number }> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
}

async function api(path: string, init: { json?: unknown; headers?: Record<string, string> } = {}) {
  return fetch(`${edge.url}${path}`, {
    method: init.json === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...init.headers },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
    signal: AbortSignal.timeout(120_000),
  });
}

/** Polls the group until no member is running; returns its trajectories. */
async function settled(groupId: string) {
  for (;;) {
    const { group, trajectories } = await store.getGroup({ groupId, includeTurns: true });
    if (trajectories.every((trajectory) => trajectory.status !== 'running')) return { group, trajectories };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function expectNothingLost(context: TestContext, trajectoryIds: readonly string[], replies?: number) {
  const { outcome, found } = await countEpisodeFaults(store, {
    trajectoryIds,
    ...(replies !== undefined ? { replies } : {}),
  });
  recordFaultOutcome(context, outcome);
  expect(outcome, found.join('; ')).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
}

// The scenarios read the store while the edge runs: a Postgres server (the embedded store is the edge
// process's own directory, which no second process may open). The fault suite's server pass runs them.
describe.skipIf(!testServerUrl)('a hostile policy and a flooding client against a real edge', () => {
  beforeAll(async () => {
    policy = new HostilePolicyServer();
    const inferenceUrl = await policy.start();
    database = await createTestDatabase(testServerUrl as string);
    store = await openStore({ url: database.url, migrations: 'apply' });
    edge = await spawnEdge(
      [
        '--database-url',
        database.url,
        '--api-key',
        apiKey,
        '--inference-url',
        inferenceUrl,
        '--default-model',
        'tiny-base',
      ],
      90_000,
      {
        EDGERL_EPISODE_MAX_REPLY_BYTES: String(maxReplyBytes),
        EDGERL_EPISODE_MAX_TOOL_CALLS: String(maxToolCalls),
        // Every call gets one attempt: the scenarios count calls.
        EDGERL_INFERENCE_TIMEOUT_MS: '30000',
      },
    );
  }, 120_000);

  afterAll(async () => {
    if (edge && edge.child.exitCode === null) {
      edge.child.kill('SIGKILL');
      await once(edge.child, 'exit');
    }
    await store?.close();
    await database?.drop();
    await policy?.close();
  });

  it('runs 16 of a reply’s 5,000 tool calls, answers the rest with one refusal, and goes on', async (context) => {
    policy.mode = { kind: 'tool-calls', calls: 5000 };
    const before = await memory(edge.child);
    const response = await api('/v1/rollouts', { json: { env: 'multi-hop', groupSize: 1, taskSeed: 1 } });
    expect(response.status).toBe(202);
    const started = (await response.json()) as { groupId: string; trajectoryIds: string[] };
    const { trajectories } = await settled(started.groupId);
    const [trajectory] = trajectories;
    const turns = trajectory?.turns ?? [];
    const after = await memory(edge.child);
    console.log(
      `hostile policy, 5,000 tool calls in one reply: episode ${trajectory?.status}, ${turns.length} turns stored (was 5,004), edge RSS ${before.rssMb} → ${after.rssMb} MiB, peak ${after.peakMb} MiB`,
    );
    // The episode went on after the refusal: its second reply answered.
    expect(trajectory?.status).toBe('finished');
    // system, user, the flooding reply, 16 results, 1 refusal, the answer.
    expect(turns).toHaveLength(2 + 1 + maxToolCalls + 1 + 1);
    const refusals = turns.filter((turn) => turn.toolError === 'call-limit');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.content).toContain(`made 5000 tool calls and at most ${maxToolCalls} run per turn`);
    expect(policy.requests.get('tool-calls')).toBe(2);
    await expectNothingLost(context, started.trajectoryIds, 2);
  }, 120_000);

  it('ends an episode whose reply is 50 MB `error` with the reason, storing none of it', async (context) => {
    policy.mode = { kind: 'huge', bytes: fiftyMb };
    const before = await memory(edge.child);
    const response = await api('/v1/rollouts', { json: { env: 'multi-hop', groupSize: 1, taskSeed: 2 } });
    expect(response.status).toBe(202);
    const started = (await response.json()) as { groupId: string; trajectoryIds: string[] };
    const { group, trajectories } = await settled(started.groupId);
    const [trajectory] = trajectories;
    const after = await memory(edge.child);
    const written = policy.hugeBytesWritten.at(-1) ?? 0;
    console.log(
      `hostile policy, 50 MB reply to the episode loop: ${trajectory?.status} (${trajectory?.errorReason}); the upstream got ${(written / 2 ** 20).toFixed(1)} MiB out before the edge cancelled; edge RSS ${before.rssMb} → ${after.rssMb} MiB, peak ${before.peakMb} → ${after.peakMb} MiB`,
    );
    expect(trajectory?.status).toBe('error');
    expect(trajectory?.errorReason).toMatch(/^policy: reply-too-large: .*passed 8388608 bytes/);
    expect(trajectory?.turns?.map((turn) => turn.role)).toEqual(['system', 'user']);
    // Not retried: one call. The upstream was cut off long before 50 MB.
    expect(policy.requests.get('huge')).toBe(1);
    expect(written).toBeLessThan(fiftyMb / 2);
    // The edge's peak grew by less than the reply: it never held it.
    expect(after.peakMb - before.peakMb).toBeLessThan(50);
    expect(group.status).not.toBe('running');
    await expectNothingLost(context, started.trajectoryIds, 0);
  }, 120_000);

  for (const stream of [false, true]) {
    it(`ends a proxied trajectory whose ${stream ? 'streamed' : 'whole'} reply is 50 MB, storing none of it`, async (context) => {
      policy.mode = { kind: 'huge', bytes: fiftyMb };
      const keys = new TrajectoryKeys();
      const opened = await api('/v1/trajectories', { json: { env: 'my-agent' } });
      expect(opened.status).toBe(201);
      const id = keys.remember(await opened.json());
      const before = await memory(edge.child);
      const response = await api('/v1/chat/completions', {
        json: { model: 'tiny-base', messages: [{ role: 'user', content: 'write forever' }], stream },
        headers: keys.header(id),
      });
      const text = await response.text();
      const after = await memory(edge.child);
      const written = policy.hugeBytesWritten.at(-1) ?? 0;
      const { trajectory, turns } = await store.getTrajectory(id);
      console.log(
        `hostile policy, 50 MB ${stream ? 'streamed' : 'whole'} reply through the proxy: HTTP ${response.status}, client got ${(text.length / 2 ** 20).toFixed(2)} MiB, trajectory ${trajectory.status} (${trajectory.errorReason}); upstream got ${(written / 2 ** 20).toFixed(1)} MiB out; edge RSS ${before.rssMb} → ${after.rssMb} MiB, peak ${before.peakMb} → ${after.peakMb} MiB`,
      );
      if (stream) {
        expect(response.status).toBe(200);
        expect(text).toContain('reply-too-large');
        expect(text).not.toContain('[DONE]');
      } else {
        expect(response.status).toBe(502);
        expect(text).toContain('reply-too-large');
      }
      expect(trajectory.status).toBe('error');
      expect(trajectory.errorReason).toMatch(/^reply-too-large: /);
      expect(turns).toHaveLength(0);
      expect(written).toBeLessThan(fiftyMb / 2);
      expect(after.peakMb - before.peakMb).toBeLessThan(50);
      await expectNothingLost(context, [id], 0);
    }, 120_000);
  }

  it('answers a burst of 1,000 groups of 4 with 202 or 429 + Retry-After; every accepted episode runs once', async (context) => {
    policy.mode = { kind: 'answer' };
    const groups = 1000;
    const inFlight = 20;
    const accepted: { groupId: string; trajectoryIds: string[] }[] = [];
    const retryAfter: number[] = [];
    const other: number[] = [];
    const started = performance.now();
    for (let at = 0; at < groups; at += inFlight) {
      await Promise.all(
        Array.from({ length: Math.min(inFlight, groups - at) }, async (_, offset) => {
          const response = await api('/v1/rollouts', {
            json: { env: 'multi-hop', groupSize: 4, taskSeed: 1000 + at + offset },
          });
          if (response.status === 202) accepted.push((await response.json()) as (typeof accepted)[number]);
          else if (response.status === 429) {
            const body = (await response.json()) as { error: { code: string } };
            expect(body.error.code).toBe('backlog-full');
            retryAfter.push(Number(response.headers.get('retry-after')));
          } else other.push(response.status);
        }),
      );
    }
    const burstMs = performance.now() - started;
    for (const group of accepted) await settled(group.groupId);
    const drainMs = performance.now() - started;
    const memoryNow = await memory(edge.child);
    const ids = accepted.flatMap((group) => group.trajectoryIds);
    console.log(
      `burst of ${groups} groups of 4: ${accepted.length} accepted (${ids.length} episodes), ${retryAfter.length} refused with 429 (Retry-After ${Math.min(...retryAfter)}–${Math.max(...retryAfter)} s), other answers ${other.length}; burst sent in ${(burstMs / 1000).toFixed(1)} s, drained ${(drainMs / 1000).toFixed(1)} s after it began; edge RSS ${memoryNow.rssMb} MiB, peak ${memoryNow.peakMb} MiB`,
    );
    expect(other).toEqual([]);
    expect(accepted.length + retryAfter.length).toBe(groups);
    expect(retryAfter.length).toBeGreaterThan(0);
    expect(retryAfter.every((seconds) => Number.isInteger(seconds) && seconds >= 1)).toBe(true);
    // Each accepted episode ran once and finished; the refused groups wrote nothing.
    for (const group of accepted) {
      const { trajectories } = await store.getGroup({ groupId: group.groupId });
      expect(trajectories.map((trajectory) => trajectory.status)).toEqual([
        'finished',
        'finished',
        'finished',
        'finished',
      ]);
    }
    const stored = await store.listGroups({ limit: 1000 });
    // This scenario's groups and the two rollouts before it; proxy trajectories have no group.
    expect(stored.length).toBe(accepted.length + 2);
    await expectNothingLost(context, ids, ids.length);
  }, 600_000);
});
