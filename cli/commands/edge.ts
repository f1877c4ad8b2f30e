// `edgerl edge`: the edge app in Node (the same Hono app as the Worker) on the embedded store by
// default, episodes run in-process. `--wrangler` instead runs the Worker itself locally with
// `wrangler dev`, next to the WebSocket tunnel its Neon driver needs to reach a local Postgres
// (what `npm run dev` does). Runs until SIGINT or SIGTERM. Reads the environment here, the entry point.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { startDevTunnel } from '../../edge/runtime/dev-tunnel.ts';
import { edgeConfigFromEnv, edgeDefaults, edgeVariables } from '../../edge/edge-config.ts';
import { startEdge } from '../../edge/runtime/node.ts';
import { defineCommand, intFlag, stringFlag, UsageError } from '../command.ts';
import { errorMessage } from '../../protocol/error-message.ts';

/** `edgerl serve-model`'s default address: what a local setup points at unless told otherwise. */
const localInference = 'http://127.0.0.1:8000/v1';

export const edgeCommand = defineCommand({
  usage: `Usage: edgerl edge [options]

Serves the edge API (POST /v1/rollouts, GET /v1/groups/:id, /v1/trajectories, the recording proxy
POST /v1/chat/completions) on the embedded store, or DATABASE_URL. Episodes run in this process,
at most EPISODE_CONCURRENCY at once; unfinished ones resume when it starts again on the same
embedded store.

Options:
  --port N              TCP port (default 8787; 0 picks a free one)
  --host ADDR           interface (default 127.0.0.1)
  --inference-url URL   OpenAI-compatible endpoint up to /v1 (default INFERENCE_BASE_URL, else
                        ${localInference}, where \`edgerl serve-model\` listens)
  --api-key KEY         accept this bearer key (default EDGE_API_KEYS; without either, a random key
                        is made and printed)
  --default-model NAME  model for requests naming no policy (default DEFAULT_MODEL)
  --concurrency N       episodes running at once (default EPISODE_CONCURRENCY, else ${edgeDefaults.episodeConcurrency})
  --database-url URL    postgres://… or memory:// (default DATABASE_URL; unset: the embedded store)
  --data-dir DIR        the embedded store's directory (default EDGERL_DATA_DIR, else .edgerl/pgdata)
  --wrangler            run the Worker with \`wrangler dev\` instead (reads .dev.vars), with a
                        WebSocket tunnel to the local Postgres on --tunnel-port
  --tunnel-port N       the tunnel's port for --wrangler (default 5480, as in .dev.vars.example)

Environment: ${Object.keys(edgeVariables).join(', ')}, DATABASE_URL.`,
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    'inference-url': { type: 'string' },
    'api-key': { type: 'string' },
    'default-model': { type: 'string' },
    concurrency: { type: 'string' },
    'database-url': { type: 'string' },
    'data-dir': { type: 'string' },
    wrangler: { type: 'boolean' },
    'tunnel-port': { type: 'string' },
  },
  async run({ values, env, stdout, stderr }) {
    const port = intFlag(values, 'port', 8787, { min: 0, max: 65535 });
    if (values.wrangler === true) {
      return runWrangler(intFlag(values, 'tunnel-port', 5480, { min: 1, max: 65535 }), port, stdout, stderr);
    }
    const apiKey = stringFlag(values, 'api-key');
    const generatedKey =
      !apiKey && !env.EDGE_API_KEYS?.trim() ? `edgerl-${randomBytes(18).toString('base64url')}` : undefined;
    let config: ReturnType<typeof edgeConfigFromEnv>;
    try {
      config = edgeConfigFromEnv({
        ...env,
        INFERENCE_BASE_URL: stringFlag(values, 'inference-url') ?? (env.INFERENCE_BASE_URL || localInference),
        EDGE_API_KEYS: apiKey ?? generatedKey ?? env.EDGE_API_KEYS,
        DEFAULT_MODEL: stringFlag(values, 'default-model') ?? env.DEFAULT_MODEL,
        EPISODE_CONCURRENCY: stringFlag(values, 'concurrency') ?? env.EPISODE_CONCURRENCY,
      });
    } catch (error) {
      throw new UsageError(errorMessage(error));
    }
    const store = storeConfigFromEnv(env, {
      url: stringFlag(values, 'database-url'),
      dataDir: stringFlag(values, 'data-dir'),
    });
    const edge = await startEdge({
      config,
      port,
      hostname: stringFlag(values, 'host') ?? '127.0.0.1',
      storeOptions: { url: store.url, dataDir: store.dataDir, migrations: 'apply' },
      log: (line) => stderr.write(`edgerl edge: ${line}\n`),
    });
    stdout.write(
      `edgerl edge: listening on ${edge.url} (store: ${edge.store.target}, ${edge.store.driver})\n`,
    );
    stdout.write(`edgerl edge: inference at ${config.upstream.baseUrl}\n`);
    if (generatedKey) stdout.write(`edgerl edge: API key for this run: ${generatedKey}\n`);
    await untilSignal();
    stdout.write('edgerl edge: shutting down\n');
    await edge.close();
    return 0;
  },
});

async function runWrangler(
  tunnelPort: number,
  port: number,
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
): Promise<number> {
  const tunnel = await startDevTunnel({ port: tunnelPort });
  stdout.write(`edgerl edge: WebSocket tunnel to local Postgres on ${tunnel.address} (NEON_DEV_WS_PROXY)\n`);
  const child = spawn('npx', ['wrangler', 'dev', '--ip', '127.0.0.1', '--port', String(port), '--local'], {
    stdio: ['inherit', 'inherit', 'inherit'],
    // Offline: no lookup of Cloudflare's request.cf data, no metrics.
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false' },
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => resolve(code ?? 0));
    });
  } catch (error) {
    stderr.write(`edgerl edge: cannot start wrangler: ${String(error)}\n`);
    return 1;
  } finally {
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
    await tunnel.close();
  }
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
