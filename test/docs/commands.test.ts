// Runs the shell commands the docs show (every ```sh / ```bash block of README.md and docs/*.md), so none
// goes stale: each page in a fresh temporary directory holding its own embedded store, each command
// through bash, and each must exit 0. Blocks marked `<!-- docs-test: skip: reason -->` (servers, accounts,
// GPUs, minutes-long runs) are not run; their `edgerl` commands are checked against the CLI's command table.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCommand } from '../../cli/commands.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import { type DocCommand, edgerlInvocations, extractCommands } from './doc-blocks.ts';
import { checkout, docFiles, readDoc } from './doc-files.ts';

const extracted = docFiles.map((file) => extractCommands(file, readDoc(file)));
const documented = extracted.flatMap((blocks) => blocks.commands);
const toRun = documented.filter((command) => command.skip === undefined);
const skipped = documented.filter((command) => command.skip !== undefined);

/**
 * `npx edgerl` finds the checkout's own bin when run inside it; commands run in a temporary directory
 * here, so `edgerl` (and `npx edgerl`) stand for `node <checkout>/bin/edgerl.js`. Other `npx` calls go
 * to npx itself.
 */
const prelude = `set -o pipefail
edgerl() { node "$DOCS_TEST_CHECKOUT/bin/edgerl.js" "$@"; }
npx() { if [ "$1" = edgerl ]; then shift; edgerl "$@"; else command npx "$@"; fi; }
`;

/** A server that never exits, or a hung command, fails instead of stalling the suite. */
const commandTimeoutMs = 60_000;

/** Pages run side by side, but no more commands at once than there are cores (each is a CPU-bound tsx start). */
const slots = createSlots(Math.max(1, availableParallelism()));

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
    command: /edgerl init \.\/my-envs/,
    stdout: /wrote my-envs\/environments\.ts, my-envs\/environments\.test\.ts/,
  },
];

let work: string;
let seededStore: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'edgerl-docs-'));
  seededStore = join(work, 'seeded-pgdata');
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

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

function runCommand(command: string, cwd: string): Promise<Outcome> {
  const env: NodeJS.ProcessEnv = { ...process.env, DOCS_TEST_CHECKOUT: checkout, NO_COLOR: '1' };
  // The page's own embedded store under cwd, whatever the caller's environment points at.
  delete env.DATABASE_URL;
  delete env.EDGERL_DATA_DIR;
  return new Promise((done, fail) => {
    const child = spawn('bash', ['-c', `${prelude}${command}`], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, commandTimeoutMs);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, timedOut });
    });
  });
}

function describeFailure(command: DocCommand, outcome: Outcome, why: string): string {
  return [
    `${command.file}:${command.line}: ${why}`,
    `  $ ${command.command}`,
    `  stdout: ${outcome.stdout.trim().slice(-2000)}`,
    `  stderr: ${outcome.stderr.trim().slice(-2000)}`,
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
    it(`${page}: ${pageCommands.length} command(s)`, async () => {
      const cwd = mkdtempSync(join(work, 'page-'));
      cpSync(seededStore, join(cwd, '.edgerl', 'pgdata'), { recursive: true });
      for (const command of pageCommands) {
        const outcome = await slots.run(() => runCommand(command.command, cwd));
        if (outcome.timedOut || outcome.code !== 0) {
          const why = outcome.timedOut
            ? `ran past ${commandTimeoutMs / 1000} s`
            : `exit status ${outcome.code}`;
          expect.fail(describeFailure(command, outcome, why));
        }
        for (const expectation of expectations) {
          if (expectation.command.test(command.command) && !expectation.stdout.test(outcome.stdout)) {
            expect.fail(describeFailure(command, outcome, `stdout does not match ${expectation.stdout}`));
          }
        }
      }
    }, 300_000);
  }
});

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
