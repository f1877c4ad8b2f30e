// The stack the SDK tests call: `edgerl model init` writes a tiny random Qwen2 checkpoint, serve-model
// serves it, and a Node edge with a real store records through its proxy in front of it. A client
// trajectory is started over the edge's API; the SDKs get only its `baseURL` (`<edge>/t/<key>/v1`).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { main } from '../../../cli/main.ts';
import type { TurnRow } from '../../../db/schema/turns.ts';
import { type RunningEdge, startEdge } from '../../../edge/runtime/node.ts';
import { type ServingModel, serveModel } from '../../../serve/serve-model.ts';
import { openTestStore, type TestStore } from '../../support/open-test-store.ts';

export const servedModelName = 'tiny';

export interface EdgeOverServeModel {
  readonly edgeUrl: string;
  /** The admin key of the edge, for calls a test makes itself. */
  readonly apiKey: string;
  readonly testStore: TestStore;
  /** Starts a client trajectory; its `baseURL` is all an SDK needs. */
  startTrajectory(env?: string): Promise<{ id: string; key: string; baseURL: string }>;
  turns(trajectoryId: string): Promise<readonly TurnRow[]>;
  close(): Promise<void>;
}

export async function startEdgeOverServeModel(): Promise<EdgeOverServeModel> {
  const apiKey = 'sdk-test-key';
  const dir = await mkdtemp(join(tmpdir(), 'edgerl-sdk-'));
  const modelDir = join(dir, 'model');
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const initialized = await main(['model', 'init', '--out', modelDir, '--preset', 'tiny'], {
    stdout: sink,
    stderr: sink,
  });
  if (initialized !== 0) throw new Error(`edgerl model init exited ${initialized}`);
  let serving: ServingModel | undefined;
  let testStore: TestStore | undefined;
  let edge: RunningEdge | undefined;
  const close = async () => {
    await edge?.close();
    await testStore?.close();
    await serving?.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    serving = await serveModel({ modelDir, port: 0, servedModelName, backend: 'wasm', log: () => {} });
    testStore = await openTestStore();
    edge = await startEdge({
      config: {
        upstream: { baseUrl: `${serving.url}/v1`, requestTokenIds: true, timeoutMs: 60_000 },
        apiKeys: [apiKey],
        defaultModel: servedModelName,
        episodeConcurrency: 2,
        policyTimeoutMs: 60_000,
      },
      port: 0,
      store: testStore.store,
      resumeUnfinished: false,
    });
  } catch (error) {
    await close();
    throw error;
  }
  const running = { edge, testStore };
  return {
    edgeUrl: running.edge.url,
    apiKey,
    testStore: running.testStore,
    async startTrajectory(env = 'sdk-agent') {
      const response = await fetch(`${running.edge.url}/v1/trajectories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ env }),
      });
      if (response.status !== 201 && response.status !== 200) {
        throw new Error(`POST /v1/trajectories answered ${response.status}: ${await response.text()}`);
      }
      const body = (await response.json()) as { trajectory: { id: string }; key: string; baseURL: string };
      return { id: body.trajectory.id, key: body.key, baseURL: body.baseURL };
    },
    async turns(trajectoryId) {
      return (await running.testStore.store.getTrajectory(trajectoryId)).turns;
    },
    close,
  };
}

/**
 * The stack for one test file: started in `beforeAll`, closed in `afterAll`. The object it returns
 * reaches the running stack, so tests use it as they would the started one.
 */
export function useEdgeOverServeModel(): EdgeOverServeModel {
  let started: EdgeOverServeModel | undefined;
  beforeAll(async () => {
    started = await startEdgeOverServeModel();
  }, 120_000);
  afterAll(async () => {
    await started?.close();
  });
  const current = (): EdgeOverServeModel => {
    if (!started) throw new Error('the edge over serve-model starts in beforeAll; use it inside a test');
    return started;
  };
  return {
    get edgeUrl() {
      return current().edgeUrl;
    },
    get apiKey() {
      return current().apiKey;
    },
    get testStore() {
      return current().testStore;
    },
    startTrajectory: (env) => current().startTrajectory(env),
    turns: (trajectoryId) => current().turns(trajectoryId),
    close: () => current().close(),
  };
}
