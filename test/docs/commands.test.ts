// Runs the shell commands the docs show (every ```sh / ```bash block of README.md and docs/*.md), so none
// goes stale: each page in one bash session (shell-session.ts) in a fresh temporary project that has
// edgerl installed and its own embedded store, and each command must exit 0. Blocks marked
// `<!-- docs-test: skip: reason -->` (accounts, GPUs, other machines) are not run; their `edgerl` commands
// are checked against the CLI's command table. A block marked `<!-- docs-test: background: URL … -->`
// starts servers with `&`: each must be the only one answering at its URL, the next command waits until
// it answers there, and whatever still runs is stopped when the page ends.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCommand } from '../../cli/commands.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import { type DocCommand, edgerlInvocations, extractCommands } from './doc-blocks.ts';
import { checkout, docFiles, readDoc } from './doc-files.ts';
import { type Outcome, ShellSession } from './shell-session.ts';

const extracted = docFiles.map((file) => extractCommands(file, readDoc(file)));
const documented = extracted.flatMap((blocks) => blocks.commands);
const toRun = documented.filter((command) => command.skip === undefined);
const skipped = documented.filter((command) => command.skip !== undefined);

const prelude = 'set -o pipefail';

/**
 * `npx edgerl` finds the project's own bin; here `edgerl` and `npx edgerl` are scripts that exec
 * `node <checkout>/bin/edgerl.js`, so a job started with `&` is the edgerl process itself (`kill %2`
 * reaches it, and `wait %2` returns when it has closed its store). Other `npx` calls go to npx itself.
 */
function writeCommandShims(dir: string): void {
  const npx = execFileSync('bash', ['-c', 'command -v npx'], { encoding: 'utf8' }).trim();
  mkdirSync(dir, { recursive: true });
  const scripts = {
    edgerl: `#!/bin/sh\nexec node "$DOCS_TEST_CHECKOUT/bin/edgerl.js" "$@"\n`,
    npx: `#!/bin/sh\nif [ "$1" = edgerl ]; then shift; exec "${join(dir, 'edgerl')}" "$@"; fi\nexec "${npx}" "$@"\n`,
  };
  for (const [name, text] of Object.entries(scripts)) {
    writeFileSync(join(dir, name), text);
    chmodSync(join(dir, name), 0o755);
  }
}

/** A hung command fails instead of stalling the suite. */
const commandTimeoutMs = 60_000;
/** In a block that starts servers: a rollout and a training cycle, minutes on a loaded machine. */
const withServersTimeoutMs = 300_000;
/** How long a server started with `&` gets to answer at its URL (the edge warms its SQL sandbox first). */
const readyTimeoutMs = 180_000;

/** Pages run side by side, but no more commands at once than there are cores (each is a CPU-bound tsx start). */
const slots = createSlots(Math.max(1, availableParallelism()));
/** Pages that start servers take turns: they listen on the docs' ports (8000, 8787). */
const serverPorts = createSlots(1);

/**
 * What some commands must print besides exiting 0 (the store the docs' examples assume is seeded below).
 * Every entry must match a command the docs run, so a renamed command cannot leave its check behind.
 */
const expectations: readonly { readonly command: RegExp; readonly stdout: RegExp }[] = [
  { command: /edgerl .*--help\b/, stdout: /Usage: edgerl/ },
  { command: /edgerl db migrate\b/, stdout: /up to date \(\d+ migrations\)|applied \d+ of \d+ migrations/ },
  { command: /edgerl sql .*--json/, stdout: /^\[/ },
  { command: /edgerl sql "select \* from group_summaries/, stdout: /\(0 rows\)/ },
  { command: /edgerl model init --out \.\/tiny(\s|$)/, stdout: /wrote tiny qwen2 model .* to \.\/tiny/ },
  { command: /edgerl ab create checkout-v2/, stdout: /checkout-v2/ },
  { command: /edgerl ab list/, stdout: /checkout-v2[\s\S]*agent@3[\s\S]*agent@4/ },
  { command: /edgerl ab report checkout-v2/, stdout: /Experiment checkout-v2/ },
  { command: /edgerl ab promote checkout-v2 agent@4/, stdout: /agent@4/ },
  { command: /edgerl ab rollback agent/, stdout: /agent@3/ },
  { command: /edgerl policy create support-bot/, stdout: /its default is support-bot@0/ },
  { command: /edgerl policy list/, stdout: /agent +tiny-qwen +agent@3[\s\S]*support-bot +Qwen/ },
  { command: /edgerl policy show support-bot/, stdout: /\* +support-bot@0 +published +base/ },
  {
    command: /edgerl rollout --env multi-hop --policy tiny-agent/,
    stdout: /(complete, mean verifier reward [\d.]+ over 8[\s\S]*){4}/,
  },
  {
    command: /edgerl rollout --env reverse-word/,
    stdout: /(complete, mean verifier reward [\d.]+ over 8[\s\S]*){4}/,
  },
  { command: /edgerl train --once --policy reverser/, stdout: /published reverser@1/ },
  { command: /edgerl policy show reverser/, stdout: /\* +reverser@1 +published/ },
  {
    command: /edgerl init \.\/my-envs/,
    stdout: /wrote my-envs\/environments\.ts, my-envs\/environments\.test\.ts/,
  },
];

let work: string;
let seededStore: string;
let shims: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'edgerl-docs-'));
  seededStore = join(work, 'seeded-pgdata');
  shims = join(work, 'bin');
  writeCommandShims(shims);
  // The examples name the policy `agent` with published versions agent@3 (its default) and agent@4.
  const store = await openStore({ dataDir: seededStore });
  try {
    const policy = await store.createPolicy({ name: 'agent', baseModel: 'tiny-qwen' });
    for (let version = 0; version <= 4; version++) {
      const row = await store.registerPolicyVersion({ policyId: policy.id });
      if (version >= 3) await store.publishPolicyVersion({ versionId: row.id, makeDefault: version === 3 });
    }
  } finally {
    await store.close();
  }
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/**
 * A page's project: the seeded store, and edgerl installed as a user's project has it (its
 * node_modules/edgerl, and zod, which the environment scaffold imports).
 */
function pageProject(): string {
  const cwd = mkdtempSync(join(work, 'page-'));
  cpSync(seededStore, join(cwd, '.edgerl', 'pgdata'), { recursive: true });
  mkdirSync(join(cwd, 'node_modules'));
  symlinkSync(checkout, join(cwd, 'node_modules', 'edgerl'), 'dir');
  symlinkSync(join(checkout, 'node_modules', 'zod'), join(cwd, 'node_modules', 'zod'), 'dir');
  return cwd;
}

function pageShell(cwd: string): ShellSession {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DOCS_TEST_CHECKOUT: checkout,
    NO_COLOR: '1',
    PATH: `${shims}:${process.env.PATH ?? ''}`,
  };
  // The page's own embedded store under cwd, whatever the caller's environment points at.
  delete env.DATABASE_URL;
  delete env.EDGERL_DATA_DIR;
  return new ShellSession({ cwd, env, prelude });
}

/** Whether anything answers HTTP at `url` (any status). */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

/** Polls `url` until it answers 2xx; false once `timeoutMs` has passed. */
async function becomesReady(url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((wake) => setTimeout(wake, 250));
  }
  return false;
}

function describeFailure(command: DocCommand, outcome: Outcome, why: string, transcript?: string): string {
  return [
    `${command.file}:${command.line}: ${why}`,
    `  $ ${command.command}`,
    `  stdout: ${outcome.stdout.trim().slice(-2000)}`,
    `  stderr: ${outcome.stderr.trim().slice(-2000)}`,
    ...(transcript === undefined
      ? []
      : [`  the session so far, servers included: ${transcript.trim().slice(-4000)}`]),
    '  (a block that cannot run offline needs `<!-- docs-test: skip: REASON -->` on the line before it)',
  ].join('\n');
}

describe('the docs', () => {
  it('mark skipped blocks well: a reason each, right before a sh/bash block', () => {
    expect(extracted.flatMap((blocks) => blocks.problems)).toEqual([]);
  });

  it('show commands that run, and every output check still matches one of them', () => {
    const unmatched = expectations
      .filter((expectation) => !toRun.some((command) => expectation.command.test(command.command)))
      .map((expectation) => String(expectation.command));
    expect(unmatched).toEqual([]);
  });

  it('name only real edgerl commands and flags, in skipped blocks too', async () => {
    const invocations = skipped.flatMap((command) =>
      edgerlInvocations(command.command).map((args) => ({ command, args })),
    );
    const problems = await Promise.all(
      invocations.map(async ({ command, args }) =>
        (await cliProblems(args)).map((p) => `${where(command)}: ${p}`),
      ),
    );
    expect(problems.flat()).toEqual([]);
  });
});

describe.concurrent('the docs run', () => {
  const pages = [...new Set(toRun.map((command) => command.file))];
  for (const page of pages) {
    const pageCommands = toRun.filter((command) => command.file === page);
    const withServers = pageCommands.some((command) => command.withServers);
    it(
      `${page}: ${pageCommands.length} command(s)`,
      async () => {
        if (withServers) await serverPorts.run(() => runPage(pageCommands));
        else await runPage(pageCommands);
      },
      withServers ? 900_000 : 300_000,
    );
  }
});

/** A page's commands in order, in one shell; the first that fails fails the page. */
async function runPage(pageCommands: readonly DocCommand[]): Promise<void> {
  const shell = pageShell(pageProject());
  try {
    for (const command of pageCommands) {
      if (command.readyUrl && (await answers(command.readyUrl))) {
        // Another process holds the port: the page would talk to it and prove nothing.
        const notRun = { code: null, stdout: '', stderr: '', timedOut: false };
        expect.fail(describeFailure(command, notRun, `something already answers at ${command.readyUrl}`));
      }
      const timeoutMs = command.withServers ? withServersTimeoutMs : commandTimeoutMs;
      const outcome = await slots.run(() => shell.run(command.command, timeoutMs));
      const fail = (why: string) =>
        expect.fail(
          describeFailure(command, outcome, why, command.withServers ? shell.transcript() : undefined),
        );
      if (outcome.timedOut) fail(`ran past ${timeoutMs / 1000} s`);
      if (outcome.code !== 0) fail(`exit status ${outcome.code}`);
      if (command.readyUrl && !(await becomesReady(command.readyUrl, readyTimeoutMs))) {
        fail(`did not answer at ${command.readyUrl} within ${readyTimeoutMs / 1000} s`);
      }
      for (const expectation of expectations) {
        if (expectation.command.test(command.command) && !expectation.stdout.test(outcome.stdout)) {
          fail(`stdout does not match ${expectation.stdout}`);
        }
      }
    }
  } finally {
    await shell.close();
  }
}

function createSlots(size: number): { run<T>(work: () => Promise<T>): Promise<T> } {
  let busy = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(work) {
      // A finishing command hands its slot straight to the next waiting one.
      if (busy < size) busy++;
      else await new Promise<void>((ready) => waiting.push(ready));
      try {
        return await work();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else busy--;
      }
    },
  };
}

function where(command: DocCommand): string {
  return `${command.file}:${command.line}`;
}

/** Whether `edgerl <args>` names a command and only flags it takes (what the dispatcher would accept). */
async function cliProblems(args: readonly string[]): Promise<string[]> {
  if (args[0] === '--help' || args[0] === undefined) return [];
  const entry = findCommand(args);
  if (!entry) return [`no edgerl command "${args.slice(0, 2).join(' ')}"`];
  const command = await entry.load();
  const flags = args
    .slice(entry.name.length)
    .filter((word) => word.startsWith('--'))
    .map((word) => word.slice(2).split('=')[0] ?? '');
  return flags
    .filter((flag) => flag !== 'help' && !Object.hasOwn(command.options, flag))
    .map((flag) => `edgerl ${entry.name.join(' ')} takes no --${flag}`);
}
