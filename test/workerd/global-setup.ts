// Node side of the workerd tests: a fresh, migrated database on the server EDGERL_TEST_DATABASE_URL
// names, the WebSocket-to-TCP tunnel the Neon driver in workerd connects through, and the inference
// double. Their addresses reach the Worker as bindings (vitest.config.ts). Without a server, only the
// tests that need no database run (see worker.test.ts).
import type { TestProject } from 'vitest/node';
import { openStore } from '../../db/drivers/open-store.ts';
import { type InferenceDouble, startInferenceDouble } from '../edge/support/inference-double.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';
import { type DevTunnel, startDevTunnel } from '../../edge/runtime/dev-tunnel.ts';

export interface WorkerdContext {
  /** Empty when no test server is configured. */
  readonly databaseUrl: string;
  readonly tunnel: string;
  readonly inferenceBaseUrl: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    workerd: WorkerdContext;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const double: InferenceDouble = await startInferenceDouble();
  let database: TestDatabase | undefined;
  let tunnel: DevTunnel | undefined;
  if (testServerUrl) {
    database = await createTestDatabase(testServerUrl);
    const store = await openStore({ url: database.url, migrations: 'apply' });
    await store.close();
    tunnel = await startDevTunnel();
  }
  project.provide('workerd', {
    databaseUrl: database?.url ?? '',
    tunnel: tunnel?.address ?? '',
    inferenceBaseUrl: double.baseUrl,
  });
  return async () => {
    await tunnel?.close();
    await database?.drop();
    await double.close();
  };
}
