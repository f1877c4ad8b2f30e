// An environment written outside edgerl's tree, as a user of an installed edgerl writes one: `edgerl init`
// scaffolds it in a temporary project whose node_modules/edgerl is a link to this checkout; its own test
// runs there with vitest (importing edgerl/environment and edgerl/environment/testing); `edgerl edge
// --environments` serves it beside the shipped ones against serve-model's tiny model; `edgerl rollout`
// runs a group of it; `edgerl train --once` (tfjs, or EDGERL_TEST_ENGINE) trains on that group and
// publishes a new version of the policy. Real processes and a real embedded store throughout.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../db/drivers/open-store.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { type EdgerlRun, runEdgerl } from '../support/run-edgerl.ts';
import { type SpawnedEdge, spawnEdge } from '../support/spawn-edge.ts';
import { useWasm, writeTinyModelDir } from '../train/support/tiny-policy.ts';
import { trainOnceArgs } from '../train/support/train-once-args.ts';

const repo = resolve(import.meta.dirname, '../..');
const apiKey = 'external-environment-key';

let project: string;
let dataDir: string;
let modelDir: string;
let serving: ServingModel | undefined;
let edge: SpawnedEdge | undefined;

/** The CLI in the user's project, on its embedded store; no server URL from the caller's environment. */
function edgerl(args: readonly string[]): Promise<EdgerlRun> {
  return runEdgerl(args, {
    cwd: project,
    env: { ...process.env, DATABASE_URL: '', EDGERL_DATA_DIR: dataDir, EDGERL_BACKEND: 'wasm' },
  });
}

/** A child process to its end, with what it printed. */
async function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

beforeAll(async () => {
  // Outside the checkout, as an installed edgerl is: the project reaches edgerl, vitest and zod
  // only through its node_modules.
  project = await mkdtemp(join(tmpdir(), 'edgerl-user-project-'));
  await mkdir(join(project, 'node_modules'));
  await symlink(repo, join(project, 'node_modules', 'edgerl'), 'dir');
  for (const dependency of ['vitest', 'zod']) {
    await symlink(join(repo, 'node_modules', dependency), join(project, 'node_modules', dependency), 'dir');
  }
  dataDir = join(project, '.edgerl', 'pgdata');
  modelDir = join(project, 'model');
  await useWasm();
  await writeTinyModelDir(modelDir);
  serving = await serveModel({ modelDir, port: 0, backend: 'wasm', log: () => {} });
}, 120_000);

afterAll(async () => {
  edge?.child.kill('SIGKILL');
  await serving?.close();
  if (project) await rm(project, { recursive: true, force: true });
});

describe('an environment of your own, outside the tree', () => {
  it('is scaffolded by edgerl init, which then refuses to overwrite it', async () => {
    const first = await edgerl(['init', 'envs']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).not.toMatch(/note:/);
    for (const file of ['environments.ts', 'environments.test.ts', 'README.md', 'package.json'])
      expect(existsSync(join(project, 'envs', file)), file).toBe(true);
    expect(JSON.parse(readFileSync(join(project, 'envs', 'package.json'), 'utf8'))).toMatchObject({
      type: 'module',
    });
    const again = await edgerl(['init', 'envs']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/environments\.ts.*already exist\(s\); edgerl init overwrites nothing/);
  });

  it('says what a project without edgerl installed lacks, at init and when the edge imports it', async () => {
    const bare = await mkdtemp(join(tmpdir(), 'edgerl-bare-project-'));
    try {
      const init = await runEdgerl(['init', bare], { cwd: project, env: process.env });
      expect(init.code).toBe(0);
      expect(init.stdout).toContain(
        `note: environments.ts imports edgerl and zod, which ${bare} cannot find`,
      );
      const edge = await edgerl(['edge', '--environments', join(bare, 'environments.ts'), '--port', '0']);
      expect(edge.code).toBe(2);
      expect(edge.stderr).toMatch(
        /cannot import it: .*'zod'.* \(install it in the module's project: npm install zod\)/,
      );
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  }, 60_000);

  it("passes its own test in the user's project, importing edgerl/environment from node_modules", async () => {
    // The outer run's VITEST_* variables would make the inner vitest think it is a worker.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST')),
    );
    const vitest = join(project, 'node_modules', 'vitest', 'vitest.mjs');
    const tested = await run(process.execPath, [vitest, 'run', '--root', project, 'envs'], project, {
      ...env,
      NO_COLOR: '1',
    });
    expect(tested.output).toMatch(/2 passed/);
    expect(tested.code).toBe(0);
  }, 120_000);

  it('refuses a module that is missing, exports nothing usable, or reuses a shipped name', async () => {
    const missing = await edgerl(['edge', '--environments', './nope.ts', '--port', '0']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/\.\/nope\.ts: no such file/);
    await writeFile(join(project, 'envs', 'none.ts'), 'export const other = 1;\n');
    const none = await edgerl(['edge', '--environments', './envs/none.ts', '--port', '0']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/exports neither `environments` nor a default/);
    await writeFile(
      join(project, 'envs', 'clash.ts'),
      "import { shippedEnvironments } from 'edgerl/environment';\nexport default [shippedEnvironments['multi-hop']];\n",
    );
    const clash = await edgerl(['edge', '--environments', './envs/clash.ts', '--port', '0']);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(/"multi-hop" is the name of a shipped environment/);
  }, 120_000);

  it('is served by edgerl edge --environments, rolled out as a group, and trained into a new version', async () => {
    if (!serving) throw new Error('serve-model did not start');
    const created = await edgerl(['policy', 'create', 'agent', '--base-model', modelDir]);
    expect(created.stdout).toMatch(/its default is agent@0/);

    edge = await spawnEdge(
      [
        '--environments',
        join(project, 'envs', 'environments.ts'),
        '--data-dir',
        dataDir,
        '--inference-url',
        `${serving.url}/v1`,
        '--api-key',
        apiKey,
      ],
      180_000,
    );
    const served = edge;
    await expect.poll(() => served.output()).toMatch(/environments: multi-hop, sql-agent, reverse-word/);
    const rollout = await edgerl([
      'rollout',
      ...['--env', 'reverse-word', '--policy', 'agent', '--groups', '1', '--size', '8'],
      ...['--max-tokens', '12', '--url', edge.url, '--api-key', apiKey, '--interval', '200'],
    ]);
    expect(rollout.stdout + rollout.stderr, edge.output()).toMatch(/completed|finished/);
    expect(rollout.code).toBe(0);
    // The embedded store is one process at a time: the edge gives it up before the trainer opens it.
    edge.child.kill('SIGINT');
    await once(edge.child, 'exit');
    edge = undefined;

    const [, ...args] = trainOnceArgs({
      modelDir,
      inferenceUrl: `${serving.url}/v1`,
      outputDir: join(project, 'train'),
      extra: ['--data-dir', dataDir],
    });
    const trained = await edgerl(args);
    expect(trained.code, trained.stdout + trained.stderr).toBe(0);
    expect(trained.stdout + trained.stderr, rollout.stdout).toMatch(/agent@1/);

    const store = await openStore({ dataDir, migrations: 'apply' });
    try {
      const [lineage] = await store.policyLineage();
      expect(lineage?.versions.map((version) => [version.version, version.status])).toEqual([
        [0, 'published'],
        [1, 'published'],
      ]);
      expect(lineage?.policy.defaultVersionId).toBe(lineage?.versions[1]?.id);
      const groups = await store.sql.query(
        'select t.env, g.status from rollout_groups g join tasks t on t.id = g.task_id',
        [],
      );
      expect(groups.rows).toEqual([['reverse-word', 'trained']]);
    } finally {
      await store.close();
    }
  }, 600_000);
});
