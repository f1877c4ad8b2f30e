// Test projects: `torch` runs the PyTorch engine's tests (test/torch/, `npm run test:torch`). `node` runs unit, integration (embedded PGlite, or the server named by
// EDGERL_TEST_DATABASE_URL) and end-to-end tests. `browser` runs the web console in headless Chromium
// (test/console/*.test.ts, `npm run test:browser`). `faults` runs the fault scenarios (test/faults/*.test.ts, its
// own CI step: `npm run test:faults`, whose reporter sums what they found). `workers` runs the edge Worker in workerd
// (@cloudflare/vitest-plugin 1.5.1, the renamed @cloudflare/vitest-pool-workers)
// against the database, tunnel and inference double that test/workerd/global-setup.ts starts, its store on Neon's
// driver; `workers-hyperdrive` runs it again with its store on a HYPERDRIVE binding (test/workerd/hyperdrive/).
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vitest/config';

/**
 * pg's CommonJS files require('pg-protocol') and require('pg-cloudflare'). The Workers pool loads them
 * through the root's Vite server, which picks pg-protocol's ES module (its "import" condition) that
 * CommonJS cannot load (brianc/node-postgres#3700, fix pending in #3749), and pg-cloudflare's empty
 * default instead of its "workerd" entry (cloudflare/workers-sdk#8840). This resolves both to the
 * CommonJS files wrangler's deploy bundle uses (conditions workerd, require); the bundle needs no help.
 */
const pgRequiresForWorkerd: Record<string, string> = {
  // npm installs both at the top of node_modules (pg's only copies); their exports maps hide dist/.
  'pg-protocol': './node_modules/pg-protocol/dist/index.js',
  'pg-cloudflare': './node_modules/pg-cloudflare/dist/index.js',
};
const pgForWorkerd: Plugin = {
  name: 'edgerl:pg-for-workerd',
  enforce: 'pre',
  resolveId: (id) => {
    const file = pgRequiresForWorkerd[id];
    return file ? fileURLToPath(new URL(file, import.meta.url)) : null;
  },
};

/** Bindings both Worker projects share; `inferenceBaseUrl` comes from global-setup.ts. */
const workerBindings = (inferenceBaseUrl: string) => ({
  EDGERL_INFERENCE_URL: inferenceBaseUrl,
  EDGERL_EDGE_API_KEYS: 'workerd-test-key',
  EDGERL_DEFAULT_MODEL: 'tiny-base',
  EDGERL_INFERENCE_TIMEOUT_MS: '10000',
});

/**
 * The test database as a Hyperdrive origin. Miniflare requires a password in it (its HyperdriveSchema);
 * the test server trusts local connections and never asks for it. Without a server, a refused port.
 */
function hyperdriveOrigin(databaseUrl: string): string {
  if (!databaseUrl) return 'postgres://nobody:none@127.0.0.1:9/none';
  const url = new URL(databaseUrl);
  if (!url.password) url.password = 'unused-by-trust-auth';
  return url.toString();
}

export default defineConfig({
  // The Workers pool resolves CommonJS requires through the root's Vite server (its module fallback).
  plugins: [pgForWorkerd],
  test: {
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: [
            '{protocol,db,model,serve,experiments,edge,trainer,cli,test,sandbox,console}/**/*.test.ts',
          ],
          exclude: [
            'node_modules/**',
            'test/workerd/**',
            'test/faults/*.test.ts',
            'test/console/*.test.ts',
            'test/torch/**',
          ],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          // The console in headless Chromium (Debian's /usr/bin/chromium, or EDGERL_CHROMIUM), driven by
          // playwright-core: its own CI step (`npm run test:browser`), which installs the browser first.
          name: 'browser',
          environment: 'node',
          include: ['test/console/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // One browser at a time: each file starts its own, and two CPU cores are the usual CI box.
          fileParallelism: false,
        },
      },
      {
        test: {
          // The PyTorch engine against the tfjs one and through the trainer: needs Python with torch,
          // transformers and peft (`npm run setup:torch`, or EDGERL_TORCH_PYTHON), so it is its own CI
          // step (`npm run test:torch`), not part of the README's `npm test`.
          name: 'torch',
          environment: 'node',
          include: ['test/torch/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 240_000,
          // Each file starts engine processes of its own; two CPU cores are the usual CI box.
          fileParallelism: false,
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
                  ...(context.sqlDatabaseUrl ? { EDGERL_SQL_DATABASE_URL: context.sqlDatabaseUrl } : {}),
                  ...workerBindings(context.inferenceBaseUrl),
                },
              },
            };
          }),
        ],
        test: {
          name: 'workers',
          include: ['test/workerd/*.test.ts'],
          globalSetup: ['test/workerd/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => {
            const context = inject('workerd');
            // The binding's local connection string, the way a developer gives it to `wrangler dev`:
            // wrangler reads this variable while it turns the [[hyperdrive]] block into a Miniflare
            // binding (applyHyperdriveEnvVars in wrangler 4.86 to 4.164), and refuses the block without it.
            process.env.CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_HYPERDRIVE = hyperdriveOrigin(
              context.databaseUrl,
            );
            return {
              main: './edge/runtime/worker.ts',
              wrangler: { configPath: './test/workerd/hyperdrive/wrangler.toml' },
              miniflare: { cf: false, bindings: workerBindings(context.inferenceBaseUrl) },
            };
          }),
        ],
        test: {
          name: 'workers-hyperdrive',
          include: ['test/workerd/hyperdrive/*.test.ts'],
          globalSetup: ['test/workerd/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
