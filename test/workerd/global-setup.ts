// Node side of the workerd tests: a fresh, migrated database on the server EDGERL_TEST_DATABASE_URL
// names, the WebSocket-to-TCP tunnel the Neon driver in workerd connects through, the inference
// double (and two more as a fleet's replicas), and (project `workers` only) a SQL sandbox with its
// reader role (setupSandbox). Their addresses reach the Worker as bindings (vitest.config.ts). Without
// a server, only the tests that need no database run (see worker.test.ts).
import type { TestProject } from 'vitest/node';
import { openStore } from '../../db/drivers/open-store.ts';
import { type InferenceDouble, startInferenceDouble } from '../edge/support/inference-double.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';
import { type DevTunnel, startDevTunnel } from '../../edge/runtime/dev-tunnel.ts';
import { createTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

export interface WorkerdContext {
  /** Empty when no test server is configured. */
  readonly databaseUrl: string;
  readonly tunnel: string;
  readonly inferenceBaseUrl: string;
  /** Two more inference doubles, the fleet of fleet.test.ts (EDGERL_INFERENCE_REPLICAS), used by nothing else. */
  readonly replicaBaseUrls: readonly [string, string];
  /** The sandbox reader's URL (EDGERL_SQL_DATABASE_URL); empty without a server and in workers-hyperdrive. */
  readonly sqlDatabaseUrl: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    workerd: WorkerdContext;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const double: InferenceDouble = await startInferenceDouble();
  const replicas = await Promise.all([startInferenceDouble(), startInferenceDouble()]);
  let database: TestDatabase | undefined;
  let tunnel: DevTunnel | undefined;
  let sandbox: TestSandbox | undefined;
  if (testServerUrl) {
    database = await createTestDatabase(testServerUrl);
    const store = await openStore({ url: database.url, migrations: 'apply' });
    await store.close();
    tunnel = await startDevTunnel();
    // The sandbox binding goes through Neon's driver, whose tunnel settings only the Neon store sets.
    if (project.name === 'workers') sandbox = await createTestSandbox(testServerUrl);
  }
  project.provide('workerd', {
    databaseUrl: database?.url ?? '',
    tunnel: tunnel?.address ?? '',
    inferenceBaseUrl: double.baseUrl,
    replicaBaseUrls: [replicas[0].baseUrl, replicas[1].baseUrl],
    sqlDatabaseUrl: sandbox?.readerUrl ?? '',
  });
  return async () => {
    await sandbox?.drop();
    await tunnel?.close();
    await database?.drop();
    await double.close();
    await Promise.all(replicas.map((replica) => replica.close()));
  };
}
