// The `edgerl train` command line: --help, usage errors that name the flag (exit 2), durations, and a
// real `--every` process that stops cleanly on SIGTERM between cycles.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { createPolicyWithBase } from '../../db/create-policy-with-base.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import { formatDefault } from '../../cli/flags/config-usage.ts';
import { parseDuration } from '../../cli/train/parse-duration.ts';
import { configFields } from '../../protocol/config-docs.ts';
import { trainConfigSchema } from '../../trainer/train/train-config.ts';
import { writeTinyModelDir } from './support/tiny-policy.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));
let root: string;
let modelDir: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'edgerl-train-cli-'));
  modelDir = join(root, 'model');
  await writeTinyModelDir(modelDir);
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const stdout = sink();
  const stderr = sink();
  const code = await main(['train', ...args], { stdout: stdout.stream, stderr: stderr.stream, env });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('edgerl train (command line)', () => {
  it('prints its usage with --help', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: edgerl train --policy NAME --model DIR --inference-url URL/);
    expect(stdout).toContain('--reward MODE');
    expect(stdout).toContain('--scale-rewards MODE');
    expect(stdout).toContain('--loss KIND');
    expect(stdout).toContain('--sft');
  });

  it('lists every config flag with its default, as the schema has them', async () => {
    const { stdout } = await run(['--help']);
    const usage = stdout.replace(/\s+/g, ' ');
    const flagged = configFields(trainConfigSchema).filter((field) => field.doc.flag !== undefined);
    expect(flagged.length).toBeGreaterThan(40);
    for (const { doc, defaultValue } of flagged) {
      expect(usage, doc.flag).toContain(`--${doc.flag}${doc.arg ? ` ${doc.arg}` : ''} `);
      if (doc.arg === undefined) continue;
      const shown = doc.shownDefault ?? (defaultValue === null ? undefined : defaultValue);
      if (shown !== undefined) {
        const text = typeof shown === 'string' ? shown : formatDefault(shown);
        expect(usage, doc.flag).toContain(`default ${text})`);
      }
    }
    // The defaults as the trainer's sources give them (loss-config.ts, fields.ts, lora-settings.ts).
    expect(usage).toMatch(/--lr X AdamW learning rate, per step \(default 5e-6\)/);
    expect(usage).toMatch(/--lease-seconds N .*\(default 600\)/);
    expect(usage).toMatch(/--loss KIND token loss: ppo-clip \| cispo \(default cispo\)/);
    expect(usage).toMatch(/--policy NAME .*\(or EDGERL_POLICY\)/);
  });

  it('refuses bad input with exit status 2 and a message naming the flag', async () => {
    const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
      [[], {}, /--policy NAME is required/],
      [['--policy', 'a'], {}, /--model DIR is required/],
      [['--policy', 'a', '--model', modelDir], {}, /--inference-url \(or EDGERL_INFERENCE_URL\) is required/],
      [
        ['--policy', 'a', '--model', modelDir, '--loss', 'ppo'],
        { EDGERL_INFERENCE_URL: 'http://x/v1' },
        /--loss must be one of ppo-clip, cispo, got "ppo"/,
      ],
      [
        ['--policy', 'a', '--model', modelDir, '--reward', 'judge'],
        { EDGERL_INFERENCE_URL: 'http://x/v1' },
        /--reward must be one of ruler, verifier, ruler\+verifier, got "judge"/,
      ],
      [
        ['--policy', 'a', '--model', modelDir, '--groups-per-step', '2.5'],
        { EDGERL_INFERENCE_URL: 'http://x/v1' },
        /--groups-per-step must be an integer between 1 and 1000, got 2.5/,
      ],
      [['--policy', 'a', '--model', modelDir, '--lr', 'fast'], {}, /--lr must be a number, got "fast"/],
      [
        ['--policy', 'a', '--model', modelDir, '--lora-targets', 'q_proj,qkv'],
        {},
        /unknown projection\(s\) qkv/,
      ],
      [['--once', '--every', '1m'], {}, /choose one of --once and --every/],
      [['--every', 'soon'], {}, /--every must be a duration such as 30s, 15m or 1h, got "soon"/],
      [
        ['--policy', 'a', '--model', modelDir, '--continuous', '--every', '1m'],
        { EDGERL_INFERENCE_URL: 'http://x/v1' },
        /--continuous runs until stopped: drop --once and --every/,
      ],
      [
        ['--policy', 'a', '--model', modelDir, '--rollout-correction', 'vtrace'],
        { EDGERL_INFERENCE_URL: 'http://x/v1' },
        /--rollout-correction must be one of none, tis, got "vtrace"/,
      ],
    ];
    for (const [args, env, message] of cases) {
      const { code, stderr } = await run(args, env);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr).toMatch(message);
    }
  });

  it('reads durations in ms, s, m and h', () => {
    expect([
      parseDuration('1500ms'),
      parseDuration('30s'),
      parseDuration('15m'),
      parseDuration('1h'),
    ]).toEqual([1500, 30_000, 900_000, 3_600_000]);
    expect(() => parseDuration('10ms')).toThrow(/at least 1s/);
  });

  it('--once with nothing to claim names the complete groups it saw and why it cannot train on them', async () => {
    const dataDir = join(root, 'unclaimable-pgdata');
    const store = await openStore({ dataDir });
    try {
      // Two complete groups rolled out on a bare model (no policy version), one for another policy.
      const other = await createPolicyWithBase(store, { name: 'other', baseModel: 'tiny' });
      for (const versionId of [undefined, undefined, other.defaultVersionId ?? undefined]) {
        const task = await store.upsertTask({ env: 'tiny-test', key: `t-${Math.random()}`, input: {} });
        const group = await store.createGroup({
          taskId: task.id,
          size: 2,
          ...(versionId ? { policyVersionId: versionId } : {}),
        });
        for (const reward of [1, 0]) {
          const { id } = await store.startTrajectory({ groupId: group.id });
          await store.finishTrajectory({ trajectoryId: id, status: 'finished', verifierReward: reward });
        }
      }
    } finally {
      await store.close();
    }
    const { code, stdout } = await run(
      [
        '--once',
        '--policy',
        'agent',
        '--model',
        modelDir,
        '--inference-url',
        'http://127.0.0.1:9/v1',
        '--output-dir',
        join(root, 'out-unclaimable'),
        '--reward',
        'verifier',
      ],
      { EDGERL_DATA_DIR: dataDir, EDGERL_BACKEND: 'wasm' },
    );
    expect(code).toBe(0);
    expect(stdout).toContain('no complete group to train on');
    expect(stdout).toMatch(/2 complete group\(s\) were rolled out without a policy .*policy "agent"/);
    expect(stdout).toContain('1 complete group(s) belong to other policies');

    // --json: the same cycle as one JSON line, the unclaimable groups by reason.
    const json = await run(
      [
        '--once',
        '--json',
        '--policy',
        'agent',
        '--model',
        modelDir,
        '--inference-url',
        'http://127.0.0.1:9/v1',
        '--output-dir',
        join(root, 'out-unclaimable-json'),
        '--reward',
        'verifier',
      ],
      { EDGERL_DATA_DIR: dataDir, EDGERL_BACKEND: 'wasm' },
    );
    expect(json.code).toBe(0);
    expect(json.stdout.endsWith('\n')).toBe(true);
    expect(json.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(json.stdout)).toEqual({
      kind: 'idle',
      stale: 0,
      setAside: 0,
      unclaimable: { withoutPolicy: 2, otherPolicy: 1, heldOut: 0, leased: 0 },
    });
  });

  it('--every runs cycles until SIGTERM, then exits 0', async () => {
    const child = spawn(
      process.execPath,
      [
        'bin/edgerl.js',
        'train',
        '--every',
        '1s',
        '--policy',
        'agent',
        '--model',
        modelDir,
        '--inference-url',
        'http://127.0.0.1:9/v1',
        '--database-url',
        'memory://',
        '--output-dir',
        join(root, 'out'),
        '--reward',
        'verifier',
      ],
      { cwd: repo, env: { ...process.env, EDGERL_BACKEND: 'wasm' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 90_000;
    // Two idle cycles show it repeats; then stop it while it sleeps.
    while ((output.match(/no complete group to train on/g) ?? []).length < 2) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`trainer did not cycle:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('SIGTERM: stopping after the current cycle');
  });

  it('--continuous waits for complete groups until SIGTERM, then exits 0', async () => {
    const child = spawn(
      process.execPath,
      [
        'bin/edgerl.js',
        'train',
        '--continuous',
        '--policy',
        'agent',
        '--model',
        modelDir,
        '--inference-url',
        'http://127.0.0.1:9/v1',
        '--database-url',
        'memory://',
        '--output-dir',
        join(root, 'out-continuous'),
        '--reward',
        'verifier',
      ],
      { cwd: repo, env: { ...process.env, EDGERL_BACKEND: 'wasm' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 90_000;
    while (!output.includes('continuous: a cycle whenever 8 complete group(s) wait')) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`trainer did not start waiting:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('SIGTERM: stopping after the current cycle');
  });
});
