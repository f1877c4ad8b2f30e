// The compiled CLI (scripts/build-cli.ts) against the sources: a fresh build answers `--version` and
// `help train` as the sources through tsx do (both spawned), every file the compiled code finds beside
// its source through `import.meta.url` exists, and bin/compiled-cli.js calls a build stale once a
// source it lists changed or is gone. Leaves out timings (npm run bench:cli).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledCli } from '../../bin/compiled-cli.js';
import { edgerlBin } from '../support/run-edgerl.ts';

interface Output {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

async function spawnNode(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Output> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** The compiled entry run as bin/edgerl.js runs it, without bin's staleness check (others may edit). */
function runCompiled(entry: string, args: readonly string[]): Promise<Output> {
  const script = `const { main } = await import(${JSON.stringify(pathToFileURL(entry).href)});
process.exitCode = await main(${JSON.stringify(args)});`;
  return spawnNode(['--input-type=module', '-e', script], process.env);
}

function runSource(args: readonly string[]): Promise<Output> {
  return spawnNode([edgerlBin, ...args], { ...process.env, EDGERL_CLI: 'source' });
}

describe('the compiled CLI', () => {
  let outDir: string;
  let entry: string;

  beforeAll(async () => {
    // Inside the checkout, so the chunks resolve npm packages from its node_modules as dist/ does.
    const dist = fileURLToPath(new URL('../../dist', import.meta.url));
    await mkdir(dist, { recursive: true });
    outDir = await mkdtemp(join(dist, 'test-'));
    // The build script in its own process, as `npm run build:cli` runs it (test/ imports no scripts/).
    const script = fileURLToPath(new URL('../../scripts/build-cli.ts', import.meta.url));
    const build = await spawnNode(['--import', 'tsx', script, '--out-dir', outDir], process.env);
    expect(build.code, build.stderr).toBe(0);
    const stamp = JSON.parse(await readFile(join(outDir, 'stamp.json'), 'utf8')) as { entry: string };
    entry = join(outDir, stamp.entry);
  }, 120_000);
  afterAll(() => rm(outDir, { recursive: true, force: true }));

  it.each([[['--version']], [['help', 'train']], [['--help']]])(
    'answers %j as the sources do',
    async (args) => {
      const [compiled, source] = await Promise.all([runCompiled(entry, args), runSource(args)]);
      expect(source.code, source.stderr).toBe(0);
      expect(compiled.stderr).toBe(source.stderr);
      expect(compiled.code).toBe(0);
      expect(compiled.stdout).toBe(source.stdout);
      expect(compiled.stdout.length).toBeGreaterThan(0);
    },
    120_000,
  );

  it('finds the files its modules locate beside their sources (worker entries, package.json)', async () => {
    const buildDir = join(entry, '..');
    const located: string[] = [];
    for (const file of (await readdir(buildDir)).filter((name) => name.endsWith('.js'))) {
      const text = await readFile(join(buildDir, file), 'utf8');
      // The build's rewrite of a module's import.meta.url, and the literal resolved against it.
      const pattern = /new URL\("([^"]+)", new URL\("([^"]+)", import\.meta\.url\)\.href\)/g;
      for (const [, target, source] of text.matchAll(pattern)) {
        const sourceUrl = new URL(source!, pathToFileURL(join(buildDir, file)));
        expect(existsSync(fileURLToPath(sourceUrl)), `${file}: ${source}`).toBe(true);
        const path = fileURLToPath(new URL(target!, sourceUrl));
        // The torch engine's Python environment exists only after `npm run setup:torch`.
        if (!existsSync(path) && !path.includes('/.venv-torch/')) {
          throw new Error(`${file}: ${target} (from ${source}) is not at ${path}`);
        }
        located.push(path);
      }
    }
    // The worker threads' entry and the CLI's package.json at least (model/worker-thread, cli/main.ts).
    expect(located.some((path) => path.endsWith('/model/worker-thread/boot-worker.js'))).toBe(true);
    expect(located.some((path) => path.endsWith('/package.json'))).toBe(true);
  });
});

describe("bin's staleness check (bin/compiled-cli.js)", () => {
  const folders: string[] = [];
  afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))));

  /** A dist folder whose stamp lists one source, as it is now, and an entry that exists. */
  async function freshDist(): Promise<{ distDir: string; source: string; entry: string }> {
    const distDir = await mkdtemp(join(tmpdir(), 'edgerl-stamp-'));
    folders.push(distDir);
    const source = join(distDir, 'source.ts');
    await writeFile(source, 'export {};\n');
    const { mtimeMs } = await stat(source);
    const stamp = { entry: 'build-test/edgerl.js', sources: { 'source.ts': mtimeMs } };
    await writeFile(join(distDir, 'stamp.json'), JSON.stringify(stamp));
    await mkdir(join(distDir, 'build-test'));
    const entry = join(distDir, 'build-test/edgerl.js');
    await writeFile(entry, 'export {};\n');
    return { distDir, source, entry };
  }

  it('runs a build whose sources are as the stamp lists them', async () => {
    const { distDir, entry } = await freshDist();
    expect(compiledCli(distDir)).toEqual({ entry: pathToFileURL(entry).href });
  });

  it('calls a build stale when a source changed, naming it, and when one is gone', async () => {
    const { distDir, source } = await freshDist();
    const later = new Date(Date.now() + 60_000);
    await utimes(source, later, later);
    expect(compiledCli(distDir)).toEqual({ stale: 'source.ts changed since the build' });
    await rm(source);
    expect(compiledCli(distDir)).toEqual({ stale: 'source.ts changed since the build' });
  });

  it('calls a build whose entry is gone stale (another build removed it)', async () => {
    const { distDir, entry } = await freshDist();
    await rm(entry);
    expect(compiledCli(distDir)).toEqual({ stale: 'build-test/edgerl.js is gone' });
  });

  it('calls a folder without a stamp no build', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'edgerl-empty-'));
    folders.push(empty);
    expect(compiledCli(empty)).toEqual({ stale: `no build in ${empty} (npm run build:cli)` });
  });
});
