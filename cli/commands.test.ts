// The command table: every file under cli/commands/ has one entry that loads it, and `main` loads only
// the chosen command's module (seen from a child process's tsx import log, not from timings).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commands } from './commands.ts';

const commandsFolder = new URL('./commands/', import.meta.url);
const checkout = fileURLToPath(new URL('..', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  /** Every module URL tsx resolved for the run, in import order. */
  readonly loaded: readonly string[];
}

/**
 * Runs `main(args)` for each call in turn as bin/edgerl.js does with the sources (tsx registered,
 * then cli/main.ts imported), with tsx's `onImport` log written to file descriptor 3 at exit.
 */
const childScript = `
import { writeSync } from 'node:fs';
import { register } from 'tsx/esm/api';
const loaded = [];
register({ onImport: (url) => loaded.push(url) });
process.on('exit', () => writeSync(3, JSON.stringify(loaded)));
const { main } = await import(${JSON.stringify(new URL('./main.ts', import.meta.url).href)});
for (const args of JSON.parse(process.env.EDGERL_TEST_CALLS)) process.exitCode = await main(args);
`;

function runEdgerl(...calls: (readonly string[])[]): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', childScript], {
      cwd: checkout,
      env: { ...process.env, EDGERL_TEST_CALLS: JSON.stringify(calls) },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let log = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    child.stdio[3]?.on('data', (chunk) => (log += chunk));
    child.on('error', fail);
    child.on('close', (code) => {
      if (log === '') fail(new Error(`no import log (exit ${code}): ${stderr}`));
      else done({ code, stdout, loaded: JSON.parse(log) as string[] });
    });
  });
}

const commandModules = (loaded: readonly string[]) =>
  loaded
    .filter((url) => url.startsWith(commandsFolder.href))
    .map((url) => url.slice(commandsFolder.href.length));

const commandFiles = readdirSync(commandsFolder).filter(
  (file) => file.endsWith('.ts') && !file.endsWith('.test.ts'),
);

describe('the command table', () => {
  it('has one entry per exported command, each loading a command whose usage names its words', async () => {
    const names = commands.map((entry) => entry.name.join(' '));
    expect(new Set(names).size).toBe(names.length);
    // The commands the folder's files export, imported here directly (vitest hands back the same module
    // instances the table loads); helper files such as ab-store.ts export none.
    const byFile = new Map<unknown, string>();
    for (const file of commandFiles) {
      for (const value of Object.values(await import(new URL(file, commandsFolder).href))) {
        if (typeof value === 'object' && value !== null && 'run' in value && 'usage' in value) {
          byFile.set(value, file);
        }
      }
    }
    expect(byFile.size).toBeGreaterThan(0);
    const reached: string[] = [];
    for (const entry of commands) {
      const command = await entry.load();
      expect(command.usage, entry.name.join(' ')).toMatch(
        new RegExp(`^Usage: edgerl ${entry.name.join(' ')}\\b`),
      );
      reached.push(byFile.get(command) ?? `${entry.name.join(' ')}: not a command file's export`);
    }
    expect(reached.sort()).toEqual([...byFile.values()].sort());
  }, 60_000);
});

describe('edgerl loads only the command it runs', () => {
  it('`edgerl --help` lists every command without loading any command module', async () => {
    const run = await runEdgerl(['--help']);
    expect(run.code).toBe(0);
    for (const entry of commands) expect(run.stdout).toContain(`${entry.name.join(' ')}  `);
    for (const entry of commands) expect(run.stdout).toContain(entry.summary);
    expect(run.loaded.some((url) => url.endsWith('/cli/commands.ts'))).toBe(true);
    expect(commandModules(run.loaded)).toEqual([]);
  }, 60_000);

  it('`edgerl db migrate --help` loads db-migrate.ts alone, and no TensorFlow.js', async () => {
    const run = await runEdgerl(['db', 'migrate', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: edgerl db migrate /);
    expect(commandModules(run.loaded)).toEqual(['db-migrate.ts']);
    expect(run.loaded.filter((url) => url.includes('/node_modules/@tensorflow/'))).toEqual([]);
  }, 60_000);

  it('no `--help` loads TensorFlow.js, PGlite or drizzle', async () => {
    // Usage text reads its defaults and choices from small modules (model/backend-names.ts,
    // db/store-constants.ts, …); what `run` needs is imported inside `run`.
    const run = await runEdgerl(...commands.map((entry) => [...entry.name, '--help']));
    expect(run.code).toBe(0);
    for (const name of ['@tensorflow', '@electric-sql/pglite', 'drizzle-orm']) {
      expect(run.loaded.filter((url) => url.includes(`/node_modules/${name}/`))).toEqual([]);
    }
    for (const entry of commands) expect(run.stdout).toContain(`Usage: edgerl ${entry.name.join(' ')}`);
  }, 120_000);

  it('`edgerl sql --help` prints the sql command’s usage', async () => {
    const sql = commands.find((entry) => entry.name.join(' ') === 'sql');
    const run = await runEdgerl(['sql', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${(await sql?.load())?.usage.trimEnd()}\n`);
    expect(commandModules(run.loaded)).toEqual(['sql.ts']);
  }, 60_000);
});
