// A SQL sandbox provisioned by `setupSandbox` on the test server: a fresh database and a reader role
// named per call (roles are server-global, so parallel test files must not share one); `drop` removes both.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { setupSandbox, type SandboxSetup } from '../../sandbox/node/setup-sandbox.ts';

export interface TestSandbox extends SandboxSetup {
  /** The admin URL of the sandbox database (for side-effect checks). */
  readonly adminUrl: string;
  drop(): Promise<void>;
}

export async function createTestSandbox(serverUrl: string): Promise<TestSandbox> {
  const suffix = randomBytes(5).toString('hex');
  const setup = await setupSandbox({
    adminUrl: serverUrl,
    database: `edgerl_sql_t_${suffix}`,
    role: `edgerl_sql_reader_t_${suffix}`,
  });
  const adminUrl = new URL(serverUrl);
  adminUrl.pathname = `/${setup.database}`;
  return {
    ...setup,
    adminUrl: adminUrl.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${setup.database} with (force)`);
        await client.query(`drop role if exists ${setup.role}`);
      } finally {
        await client.end();
      }
    },
  };
}
