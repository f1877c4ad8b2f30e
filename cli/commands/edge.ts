// `edgerl edge`: the edge app in Node (the same Hono app as the Worker) on the embedded store by
// default, episodes run in-process. `--wrangler` instead runs the Worker itself locally with
// `wrangler dev`, next to the WebSocket tunnel its Neon driver needs to reach a local Postgres
// (what `npm run dev` does). Runs until SIGINT or SIGTERM. Reads the environment here, the entry point.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { edgeConfigFields, edgeConfigFromEnv, localInferenceUrl } from '../../edge/edge-config.ts';
import { configFields, documented, parseConfig } from '../../protocol/config-docs.ts';
import { intBetween } from '../../protocol/config-fields.ts';
import { defineCommand, UsageError } from '../command.ts';
import { configOptions, readConfigFlags } from '../flags/config-flags.ts';
import { storeFlagFields } from '../flags/store-flags.ts';
import { usageOptions, usageVariables } from '../flags/config-usage.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { untilSignal } from '../until-signal.ts';

/** The Node process's own flags, besides the edge config's (edge/edge-config.ts). */
export const edgeNodeSchema = z.strictObject({
  port: documented(intBetween(0, 65_535).default(8787), {
    doc: 'TCP port; 0 picks a free one',
    source: "wrangler dev's",
    flag: 'port',
    arg: 'N',
  }),
  host: documented(z.string().min(1).default('127.0.0.1'), {
    doc: 'interface to listen on; 0.0.0.0 exposes it',
    source: 'local only',
    flag: 'host',
    arg: 'ADDR',
  }),
  ...storeFlagFields(),
  environments: documented(z.string().min(1).optional(), {
    doc: 'a module of your environments (export `environments` or default: a record or array), served beside the shipped ones',
    shownDefault: 'the shipped ones only',
    flag: 'environments',
    arg: 'FILE',
  }),
  wrangler: documented(z.boolean().default(false), {
    doc: 'run the Worker with `wrangler dev` instead',
    flagDoc:
      'run the Worker with `wrangler dev` instead (reads .dev.vars), with a WebSocket tunnel to the local Postgres on --tunnel-port',
    flag: 'wrangler',
    sets: true,
  }),
  tunnelPort: documented(intBetween(1, 65_535).default(5480), {
    doc: "the tunnel's port for --wrangler",
    source: 'as in .dev.vars.example',
    flag: 'tunnel-port',
    arg: 'N',
  }),
});

const nodeFields = configFields(edgeNodeSchema);

export const edgeCommand = defineCommand({
  usage: `Usage: edgerl edge [options]

Serves the edge API (POST /v1/rollouts, GET /v1/groups/:id, /v1/trajectories, the recording proxy
POST /v1/chat/completions) on the embedded store, or DATABASE_URL. Episodes run in this process,
at most EDGERL_EPISODE_CONCURRENCY at once, each under a lease it renews. At start and every
EDGERL_EPISODE_SWEEP_SECONDS it resumes episodes whose runner stopped (on the embedded store every
running one; on a shared server those whose lease lapsed, and its own under the same --runner), or
ends them as error with a reason.

${usageOptions([...nodeFields, ...edgeConfigFields])}

Environment, besides the flags' variables:
${usageVariables(edgeConfigFields)}`,
  options: { ...configOptions(nodeFields), ...configOptions(edgeConfigFields) },
  async run({ values, env, stdout, stderr }) {
    const { startEdge } = await import('../../edge/runtime/node.ts');
    const node = parseConfig(edgeNodeSchema, readConfigFlags(nodeFields, values, env), (issues) => {
      return new UsageError(issues.join('; '));
    });
    if (node.wrangler && node.environments) {
      throw new UsageError(
        "--environments is for the Node edge; a Worker's come from its entry (createWorker, docs/workers.md)",
      );
    }
    if (node.wrangler) return runWrangler(node.tunnelPort, node.port, stdout, stderr);
    // The flags stand in for their variables; edgeConfigFromEnv is the Worker's entry too.
    const read = readConfigFlags(edgeConfigFields, values, env);
    // A repeated --inference-url is a list: the comma-separated text the variable holds.
    const inference = read.EDGERL_INFERENCE_URL;
    const flags = {
      ...read,
      ...(Array.isArray(inference) ? { EDGERL_INFERENCE_URL: inference.join(',') } : {}),
    } as Record<string, string>;
    const generatedKey = flags.EDGERL_EDGE_API_KEYS?.trim()
      ? undefined
      : `edgerl-${randomBytes(18).toString('base64url')}`;
    let config: ReturnType<typeof edgeConfigFromEnv>;
    try {
      config = edgeConfigFromEnv(
        {
          ...env,
          ...flags,
          EDGERL_INFERENCE_URL: flags.EDGERL_INFERENCE_URL ?? localInferenceUrl,
          EDGERL_EDGE_API_KEYS: generatedKey ?? flags.EDGERL_EDGE_API_KEYS,
        },
        (line) => stderr.write(`edgerl edge: ${line}\n`),
      );
    } catch (error) {
      throw new UsageError(errorMessage(error));
    }
    const store = storeConfigFromEnv(env, { url: node.databaseUrl, dataDir: node.dataDir });
    const environments = node.environments ? await userEnvironments(node.environments) : undefined;
    const edge = await startEdge({
      config,
      port: node.port,
      hostname: node.host,
      storeOptions: { url: store.url, dataDir: store.dataDir, migrations: 'apply' },
      // Beside the data directory, as its lock file is (`<dataDir>.lock`): PGlite owns the directory itself.
      sandboxCacheDir: `${store.dataDir}.sql-sandbox`,
      ...(environments ? { environments } : {}),
      log: (line) => stderr.write(`edgerl edge: ${line}\n`),
    });
    stdout.write(
      `edgerl edge: listening on ${edge.url} (store: ${edge.store.target}, ${edge.store.driver})\n`,
    );
    stdout.write(
      config.fleet
        ? `edgerl edge: inference fleet of ${config.fleet.replicas.length}: ${config.fleet.replicas.join(', ')}\n`
        : `edgerl edge: inference at ${config.upstream.baseUrl}\n`,
    );
    if (environments) stdout.write(`edgerl edge: environments: ${Object.keys(environments).join(', ')}\n`);
    if (generatedKey) stdout.write(`edgerl edge: API key for this run: ${generatedKey}\n`);
    await untilSignal();
    stdout.write('edgerl edge: shutting down\n');
    await edge.close();
    return 0;
  },
});

/** The module's environments beside the shipped ones; a bad module is a usage error naming it. */
async function userEnvironments(file: string) {
  // Loaded here, as startEdge is: `edgerl edge --help` loads no environment.
  const [{ importEnvironments }, { combineEnvironments }, { EnvironmentsError }] = await Promise.all([
    import('../../edge/runtime/import-environments.ts'),
    import('../../edge/environments/combine-environments.ts'),
    import('../../edge/environments/environments-error.ts'),
  ]);
  try {
    return combineEnvironments(await importEnvironments(file), { source: file });
  } catch (error) {
    if (error instanceof EnvironmentsError) throw new UsageError(error.message);
    throw error;
  }
}

async function runWrangler(
  tunnelPort: number,
  port: number,
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
): Promise<number> {
  const { startDevTunnel } = await import('../../edge/runtime/dev-tunnel.ts');
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
