// `edgerl console`: the web console over the configured store, on this machine (no key: localhost
// only) or behind EDGERL_EDGE_API_KEYS (a browser signs in once). With --export DIR it writes the static
// export instead and exits. Runs until SIGINT or SIGTERM. Reads the environment here, the entry point.
import { z } from 'zod';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { isLoopbackHost } from '../../console/auth/same-origin.ts';
import type { ConsoleAccess } from '../../console/console-env.ts';
import { configFields, documented, parseConfig } from '../../protocol/config-docs.ts';
import { intBetween } from '../../protocol/config-fields.ts';
import { parseReplicaList } from '../../protocol/replica-url.ts';
import { defineCommand, UsageError } from '../command.ts';
import { defaultConsolePort } from '../console/console-port.ts';
import { configOptions, readConfigFlags } from '../flags/config-flags.ts';
import { usageOptions } from '../flags/config-usage.ts';
import { storeFlagFields } from '../flags/store-flags.ts';
import { untilSignal } from '../until-signal.ts';

export const consoleSchema = z.strictObject({
  port: documented(intBetween(0, 65_535).default(defaultConsolePort), {
    doc: 'TCP port; 0 picks a free one',
    source: "the edge's 8787, plus one",
    flag: 'port',
    arg: 'N',
  }),
  host: documented(z.string().min(1).default('127.0.0.1'), {
    doc: 'interface to listen on; anything but loopback needs EDGERL_EDGE_API_KEYS',
    source: 'local only',
    flag: 'host',
    arg: 'ADDR',
  }),
  ...storeFlagFields(),
  model: documented(z.string().min(1).optional(), {
    doc: "a model directory whose tokenizer shows each sampled token's text (default: token ids)",
    flag: 'model',
    arg: 'DIR',
  }),
  export: documented(z.string().min(1).optional(), {
    doc: 'write the static export (index.html and the pages it links) to DIR and exit',
    flag: 'export',
    arg: 'DIR',
  }),
});

const fields = configFields(consoleSchema);

export const consoleCommand = defineCommand({
  usage: `Usage: edgerl console [options]

The web console over the trajectory store: training runs charted per step, rollout groups side by
side, trajectories turn by turn with their sampled tokens, policy lineage with promote and rollback,
and A/B experiments (the numbers of edgerl ab report). Without EDGERL_EDGE_API_KEYS it answers requests to
localhost only and asks for no key; with it, a browser signs in once with one of the keys. The edge
serves the same pages at /console. With the embedded store, stop the edge first (one process at a
time) or use the edge's /console.

${usageOptions(fields)}

Environment:
  EDGERL_EDGE_API_KEYS       comma-separated keys a browser signs in with (and scripts send as a bearer
                             token); keys of EDGERL_EDGE_RECORD_KEYS and EDGERL_EDGE_ROLLOUT_KEYS are refused
                             (the console needs admin)
  EDGERL_INFERENCE_REPLICAS  the fleet requests are routed to: promote and rollback need the version ready
                             there`,
  options: configOptions(fields),
  async run({ values, env, stdout, stderr }) {
    const options = parseConfig(
      consoleSchema,
      readConfigFlags(fields, values, env),
      (issues) => new UsageError(issues.join('; ')),
    );
    const { KeyRing } = await import('../../protocol/key-ring.ts');
    const keyList = (text: string | undefined) =>
      (text ?? '')
        .split(',')
        .map((key) => key.trim())
        .filter((key) => key.length > 0);
    const adminKeys = keyList(env.EDGERL_EDGE_API_KEYS);
    // The scoped keys only so that signing in with one is refused by name of the scope it lacks.
    const keys = new KeyRing({
      admin: adminKeys,
      rollout: keyList(env.EDGERL_EDGE_ROLLOUT_KEYS),
      record: keyList(env.EDGERL_EDGE_RECORD_KEYS),
    });
    const access: ConsoleAccess = adminKeys.length > 0 ? { kind: 'keys', keys } : { kind: 'loopback' };
    if (access.kind === 'loopback' && !options.export && !isLoopbackHost(options.host)) {
      throw new UsageError(
        `--host ${options.host} serves other machines: set EDGERL_EDGE_API_KEYS so they have to sign in`,
      );
    }
    const fleet = env.EDGERL_INFERENCE_REPLICAS ? parseReplicaList(env.EDGERL_INFERENCE_REPLICAS) : [];
    const { writeConsoleExport } = await import('../console/write-export.ts');
    const { startConsole } = await import('../console/start-console.ts');
    const { tokenTextFromModel } = await import('../console/token-text.ts');
    const { openStore } = await import('../../db/drivers/open-store.ts');
    const tokenText = options.model ? await tokenTextFromModel(options.model) : undefined;
    const config = storeConfigFromEnv(env, { url: options.databaseUrl, dataDir: options.dataDir });
    const store = await openStore({ url: config.url, dataDir: config.dataDir });
    try {
      if (options.export) {
        const result = await writeConsoleExport(store, options.export, tokenText ? { tokenText } : {});
        stdout.write(
          `edgerl console: wrote ${result.files} files (${result.runs} runs, ${result.groups} groups, ${result.trajectories} trajectories, ${result.experiments} experiments) to ${result.index}\n`,
        );
        return 0;
      }
      const running = await startConsole({
        store,
        access,
        port: options.port,
        hostname: options.host,
        ...(fleet.length > 0 ? { fleet } : {}),
        ...(tokenText ? { tokenText } : {}),
        log: (line) => stderr.write(`${line}\n`),
        logError: (error) =>
          stderr.write(
            `edgerl console: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
          ),
      });
      stdout.write(`edgerl console: ${running.url} (store: ${store.target}, ${store.driver})\n`);
      stdout.write(
        access.kind === 'keys'
          ? 'edgerl console: sign in with one of EDGERL_EDGE_API_KEYS\n'
          : 'edgerl console: no EDGERL_EDGE_API_KEYS: answering localhost only, no sign-in\n',
      );
      await untilSignal();
      stdout.write('edgerl console: shutting down\n');
      await running.close();
      return 0;
    } finally {
      await store.close();
    }
  },
});
