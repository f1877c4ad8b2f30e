// End to end with a real model: `edgerl model init` writes a tiny random Qwen2 checkpoint, edgerl's
// own inference endpoint (serve-model) serves it, and the Node edge runs full episodes against it
// and records an outside agent through the proxy. The model is random, so answers are nonsense;
// what is checked is the plumbing: every assistant turn is token-exact (ids and logprobs as the
// endpoint sampled them), episodes end, the group completes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { type RunningEdge, startEdge } from '../../edge/runtime/node.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

const key = 'e2e-key';
let dir: string;
let serving: ServingModel;
let testStore: TestStore;
let edge: RunningEdge;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgerl-e2e-'));
  const modelDir = join(dir, 'model');
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  expect(
    await main(['model', 'init', '--out', modelDir, '--preset', 'tiny'], { stdout: sink, stderr: sink }),
  ).toBe(0);
  serving = await serveModel({ modelDir, port: 0, servedModelName: 'tiny', backend: 'wasm', log: () => {} });
  testStore = await openTestStore();
  edge = await startEdge({
    config: {
      upstream: { baseUrl: `${serving.url}/v1`, requestTokenIds: true, timeoutMs: 60_000 },
      apiKeys: [key],
      defaultModel: 'tiny',
      episodeConcurrency: 2,
      policyTimeoutMs: 60_000,
    },
    port: 0,
    store: testStore.store,
    resumeUnfinished: false,
  });
});
afterAll(async () => {
  await edge?.close();
  await testStore?.close();
  await serving?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const api = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${edge.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('the Node edge with serve-model and a tiny model', () => {
  it('runs a group of full episodes with token-exact assistant turns', async () => {
    const response = await api('/v1/rollouts', {
      env: 'multi-hop',
      groupSize: 2,
      taskSeed: 4,
      settings: { maxTokens: 12, seed: 7 },
    });
    expect(response.status).toBe(202);
    const { groupId } = (await response.json()) as { groupId: string };
    await edge.queue.idle();
    const { group, trajectories } = await testStore.store.getGroup({ groupId, includeTurns: true });
    expect(group.status).toBe('complete');
    let assistantTurns = 0;
    for (const trajectory of trajectories) {
      expect(['finished', 'truncated']).toContain(trajectory.status);
      for (const turn of trajectory.turns ?? []) {
        if (turn.role !== 'assistant') continue;
        assistantTurns += 1;
        const ids = turn.completionTokenIds ?? [];
        expect(ids.length).toBeGreaterThan(0);
        expect(ids.length).toBeLessThanOrEqual(12);
        expect(turn.completionLogprobs).toHaveLength(ids.length);
        for (const logprob of turn.completionLogprobs ?? []) expect(logprob).toBeLessThanOrEqual(0);
        expect(turn.promptTokenCount).toBeGreaterThan(0);
        expect(turn.servedBy).toBe('tiny');
        expect(turn.metadata).toMatchObject({ tokenExact: true, maxTokens: 12 });
      }
    }
    expect(assistantTurns).toBeGreaterThanOrEqual(2);
  });

  it('records an outside agent through the proxy with the ids the endpoint sampled', async () => {
    const created = await api('/v1/trajectories', { env: 'outside-agent' });
    const { trajectory, key } = (await created.json()) as { trajectory: { id: string }; key: string };
    const reply = await api(
      '/v1/chat/completions',
      {
        model: 'whatever-the-agent-says',
        messages: [{ role: 'user', content: 'Say something.' }],
        max_tokens: 8,
        seed: 3,
        return_token_ids: true,
        logprobs: true,
      },
      { 'x-edgerl-trajectory': key },
    );
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as {
      choices: { token_ids: number[]; logprobs: { content: { logprob: number }[] } }[];
    };
    const choice = body.choices[0];
    const { turns } = await testStore.store.getTrajectory(trajectory.id);
    expect(turns.map((turn) => turn.role)).toEqual(['user', 'assistant']);
    expect(turns[1]?.completionTokenIds).toEqual(choice?.token_ids);
    expect(turns[1]?.completionLogprobs).toEqual(choice?.logprobs.content.map((entry) => entry.logprob));
    expect(turns[1]?.servedBy).toBe('tiny');
  });

  it('records a streamed call with the ids the endpoint streamed', async () => {
    const created = await api('/v1/trajectories', { env: 'outside-agent' });
    const { trajectory, key } = (await created.json()) as { trajectory: { id: string }; key: string };
    const reply = await api(
      '/v1/chat/completions',
      {
        model: 'tiny',
        messages: [{ role: 'user', content: 'Stream something.' }],
        max_tokens: 6,
        seed: 5,
        stream: true,
        return_token_ids: true,
      },
      { 'x-edgerl-trajectory': key },
    );
    expect(reply.status).toBe(200);
    const chunks = (await reply.text())
      .split('\n\n')
      .filter((block) => block.startsWith('data: {'))
      .map((block) => JSON.parse(block.slice(6)) as { choices: { token_ids?: number[] }[] });
    const streamedIds = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.token_ids ?? []));
    expect(streamedIds.length).toBeGreaterThan(0);
    const { turns } = await testStore.store.getTrajectory(trajectory.id);
    expect(turns[1]?.completionTokenIds).toEqual(streamedIds);
    expect(turns[1]?.completionLogprobs).toHaveLength(streamedIds.length);
    expect(turns[1]?.metadata).toMatchObject({ streamed: true, tokenExact: true });
  });
});
