// Test projects: `node` runs unit, integration (embedded PGlite, or the server named by
// EDGERL_TEST_DATABASE_URL) and end-to-end tests. `faults` runs the fault scenarios (test/faults/*.test.ts, its
// own CI step: `npm run test:faults`, whose reporter sums what they found). `workers` runs the edge Worker in workerd
// (@cloudflare/vitest-pool-workers 0.15.1, the last release that runs on Node 20 with wrangler 4.86.0)
// against the database, tunnel and inference double that test/workerd/global-setup.ts starts.
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['{protocol,db,model,serve,experiments,edge,trainer,cli,test,sandbox}/**/*.test.ts'],
          exclude: ['node_modules/**', 'test/workerd/**', 'test/faults/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'faults',
          environment: 'node',
          include: ['test/faults/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 120_000,
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => {
            const context = inject('workerd');
            return {
              main: './edge/runtime/worker.ts',
              wrangler: { configPath: './wrangler.toml' },
              miniflare: {
                // No request.cf lookup: it would call a Cloudflare host, and tests run offline.
                cf: false,
                bindings: {
                  // A refused port when there is no server: only the database-free tests run then.
                  DATABASE_URL: context.databaseUrl || 'postgres://nobody@127.0.0.1:9/none',
                  NEON_DEV_WS_PROXY: context.tunnel || '127.0.0.1:9',
                  INFERENCE_BASE_URL: context.inferenceBaseUrl,
                  EDGE_API_KEYS: 'workerd-test-key',
                  DEFAULT_MODEL: 'tiny-base',
                  INFERENCE_TIMEOUT_MS: '10000',
                },
              },
            };
          }),
        ],
        test: {
          name: 'workers',
          include: ['test/workerd/**/*.test.ts'],
          globalSetup: ['test/workerd/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
