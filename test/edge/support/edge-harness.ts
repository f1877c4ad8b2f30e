// One Node edge for a test file: a fresh store (in-memory PGlite, or a new database on the server
// EDGERL_TEST_DATABASE_URL names), the inference double, and the edge on a free port, with timers
// that do not sleep for real inside episodes. `api` calls it with the test key.
import type { Store } from '../../../db/store.ts';
import type { EdgeLimits } from '../../../edge/edge-limits.ts';
import type { EdgeConfig } from '../../../edge/edge-config.ts';
import type { Environment } from '../../../edge/environments/environment.ts';
import { environments } from '../../../edge/environments/environments.ts';
import { type RunningEdge, startEdge } from '../../../edge/runtime/node.ts';
import { openTestStore, type TestStore } from '../../support/open-test-store.ts';
import { type InferenceDouble, startInferenceDouble } from './inference-double.ts';

export const testApiKey = 'test-key-0123456789';

export interface EdgeHarness {
  readonly edge: RunningEdge;
  readonly double: InferenceDouble;
  readonly store: Store;
  /** The edge's log lines (episode outcomes other than `ran`, retries). */
  readonly logs: string[];
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly environments?: Readonly<Record<string, Environment>>;
  readonly defaultModel?: string;
  readonly limits?: Partial<EdgeLimits>;
  readonly concurrency?: number;
  /** One upstream call's limit (default 10 s); fault tests shorten it to see a timeout. */
  readonly upstreamTimeoutMs?: number;
  /** One policy call's limit inside an episode (default 10 s); fault tests shorten it likewise. */
  readonly policyTimeoutMs?: number;
  /**
   * How long the edge reuses a name's route (default 0 here: a test that promotes or retires a
   * version sees it at once; test/edge/route-cache.test.ts covers the cache).
   */
  readonly routeCacheMs?: number;
  /** More of the edge's config (scoped keys, trusted proxies), over the harness's own. */
  readonly config?: Partial<EdgeConfig>;
}

export async function startEdgeHarness(options: HarnessOptions = {}): Promise<EdgeHarness> {
  const double = await startInferenceDouble();
  let testStore: TestStore | undefined;
  const logs: string[] = [];
  try {
    testStore = await openTestStore();
    const edge = await startEdge({
      config: {
        upstream: {
          baseUrl: double.baseUrl,
          requestTokenIds: true,
          timeoutMs: options.upstreamTimeoutMs ?? 10_000,
        },
        apiKeys: [testApiKey],
        defaultModel: options.defaultModel ?? 'tiny-base',
        episodeConcurrency: options.concurrency ?? 4,
        policyTimeoutMs: options.policyTimeoutMs ?? 10_000,
        ...options.config,
      },
      port: 0,
      store: testStore.store,
      environments: options.environments ?? environments,
      // Backoffs are computed as usual but not waited for, so retry tests run at full speed.
      episodeDeps: { sleep: async () => {} },
      retryDelayMs: () => 5,
      resumeUnfinished: false,
      log: (line) => logs.push(line),
      ...(options.limits ? { limits: options.limits } : {}),
      routeCacheMs: options.routeCacheMs ?? 0,
    });
    const held = testStore;
    return {
      edge,
      double,
      store: held.store,
      logs,
      api(path, init = {}) {
        const { json, ...rest } = init;
        const headers = new Headers(rest.headers);
        if (!headers.has('authorization')) headers.set('authorization', `Bearer ${testApiKey}`);
        if (json !== undefined) headers.set('content-type', 'application/json');
        return fetch(`${edge.url}${path}`, {
          ...rest,
          headers,
          ...(json !== undefined ? { body: JSON.stringify(json), method: rest.method ?? 'POST' } : {}),
        });
      },
      async close() {
        await edge.close();
        await held.close();
        await double.close();
      },
    };
  } catch (error) {
    await testStore?.close();
    await double.close();
    throw error;
  }
}
