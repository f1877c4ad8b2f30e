// `kill -9` of a real `edgerl train --once` process at named points of a cycle, then a second run:
// no data is lost, no group is trained twice, and the second run either finishes the first one's
// checkpoint (killed after it was written) or trains the groups afresh (killed before). The child
// pauses at the point named by EDGERL_TRAIN_PAUSE_AT, says so on stderr, and is killed with SIGKILL.
// Also SIGTERM mid-cycle (the run ends interrupted). Store: the embedded PGlite store in a data
// directory (each process opens it in turn).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../db/drivers/open-store.ts';
import type { Store } from '../../db/store.ts';
import { loadModel, type PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { loadTokenizer } from '../../model/tokenizer/load-tokenizer.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { readOptimizerMoments } from '../../trainer/engine/optimizer-state-file.ts';
import type { HookPoint } from '../../trainer/train/trainer-session.ts';
import { seedGroup, seedPolicy } from './support/seed-groups.ts';
import { trainOnceArgs } from './support/train-once-args.ts';
import { useWasm, writeTinyModelDir } from './support/tiny-policy.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));
let root: string;
let modelDir: string;
let dataDir: string;
let outputDir: string;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;
let baseVersionId: string;

beforeAll(async () => {
  await useWasm();
  root = await mkdtemp(join(tmpdir(), 'edgerl-kill-'));
  modelDir = join(root, 'model');
  dataDir = join(root, 'pgdata');
  outputDir = join(root, 'out');
  await writeTinyModelDir(modelDir);
  [sampler, tokenizer] = await Promise.all([loadModel(modelDir), loadTokenizer(modelDir)]);
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
  await withStore(async (store) => {
    baseVersionId = (await seedPolicy(store, 'agent')).base.id;
  });
});

afterAll(async () => {
  await serving?.close();
  sampler?.dispose();
  if (root) await rm(root, { recursive: true, force: true });
});

/** The embedded store is one process at a time: open it, work, close it before a child runs. */
async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ dataDir });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

function train(pauseAt?: HookPoint): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const args = trainOnceArgs({
    modelDir,
    inferenceUrl: `${serving.url}/v1`,
    outputDir,
    extra: ['--data-dir', dataDir],
  });
  const { EDGERL_TRAIN_PAUSE_AT: _ignored, DATABASE_URL: _url, ...env } = process.env;
  const child = spawn(process.execPath, args, {
    cwd: repo,
    env: { ...env, EDGERL_BACKEND: 'wasm', ...(pauseAt ? { EDGERL_TRAIN_PAUSE_AT: pauseAt } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** Runs the trainer until it pauses at `point`, then SIGKILLs it. */
async function killAt(point: HookPoint): Promise<string> {
  const run = train(point);
  const deadline = Date.now() + 90_000;
  while (!run.output().includes(`paused at ${point}`)) {
    if (run.child.exitCode !== null) throw new Error(`trainer exited before ${point}:\n${run.output()}`);
    if (Date.now() > deadline) {
      run.child.kill('SIGKILL');
      throw new Error(`trainer never reached ${point}:\n${run.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  run.child.kill('SIGKILL');
  await run.exited;
  return run.output();
}

async function trainToEnd(): Promise<string> {
  const run = train();
  const code = await run.exited;
  if (code !== 0) throw new Error(`trainer exited with ${code}:\n${run.output()}`);
  return run.output();
}

async function seed(seedNumber: number): Promise<{ groupId: string; turns: number }> {
  return withStore(async (store) => {
    const seeded = await seedGroup(store, sampler, tokenizer, {
      versionId: baseVersionId,
      rewards: [1, 0, 0, 1],
      seed: seedNumber,
    });
    return { groupId: seeded.groupId, turns: await turnCount(store) };
  });
}

async function turnCount(store: Store): Promise<number> {
  return Number((await store.sql.query('select count(*) from turns', [])).rows[0]?.[0]);
}

/** Every step record of the policy, and each group's status and training run. */
async function ledger() {
  return withStore(async (store) => {
    const steps = (
      await store.sql.query(
        `select s.step, s.group_ids from training_steps s join training_runs r on r.id = s.training_run_id
         join policies p on p.id = r.policy_id where p.name = 'agent' order by s.step`,
        [],
      )
    ).rows.map(([step, groups]) => ({ step: Number(step), groups: groups as string[] }));
    const versions = (
      await store.sql.query(
        `select v.adapter_name, v.status from policy_versions v join policies p on p.id = v.policy_id
         where p.name = 'agent' order by v.version`,
        [],
      )
    ).rows.map(([name, status]) => `${name}:${status}`);
    const groups = (
      await store.sql.query(`select id, status, lease_owner from rollout_groups order by created_at`, [])
    ).rows.map(([id, status, owner]) => ({
      id: id as string,
      status: status as string,
      owner: owner as string | null,
    }));
    const defaultVersion = (await store.getDefaultVersion({ policyName: 'agent' }))?.adapterName;
    const runs = (await store.sql.query('select status from training_runs order by started_at', [])).rows.map(
      ([status]) => String(status),
    );
    return { steps, versions, groups, defaultVersion, runs, turns: await turnCount(store) };
  });
}

describe('edgerl train: kill -9 and resume', () => {
  it('killed after the checkpoint: the next run publishes it without training the group again', async () => {
    const { groupId, turns } = await seed(1);
    await killAt('checkpointed');
    expect(existsSync(join(outputDir, 'checkpoints', '0001', 'trainer_state.json'))).toBe(true);
    expect(existsSync(join(outputDir, 'checkpoints', '0001', 'committed.json'))).toBe(false);
    const midway = await ledger();
    expect(midway.groups.find((group) => group.id === groupId)?.status).toBe('complete');
    expect(midway.defaultVersion).toBe('agent@0');

    const output = await trainToEnd();
    expect(output).toContain(
      "published agent@1 (version 1, 1 step(s), 1 group(s)) from an earlier run's checkpoint",
    );
    const after = await ledger();
    expect(after.steps).toEqual([{ step: 1, groups: [groupId] }]);
    expect(after.versions).toEqual(['agent@0:published', 'agent@1:published']);
    expect(after.defaultVersion).toBe('agent@1');
    expect(after.groups.find((group) => group.id === groupId)).toMatchObject({
      status: 'trained',
      owner: null,
    });
    expect(after.turns).toBe(turns);
    // The killed run's checkpoint was finished by the next process, which then ended that run.
    expect(after.runs).toEqual(['finished']);
    expect((await readOptimizerMoments(join(outputDir, 'checkpoints', '0001'))).step).toBe(1);
  });

  it('killed in the middle of a step (before its checkpoint): the next run trains the group once', async () => {
    const { groupId } = await seed(2);
    await killAt('trained');
    expect(existsSync(join(outputDir, 'checkpoints', '0002'))).toBe(false);
    const midway = await ledger();
    // The dead run still holds the lease; nothing of its step reached the store.
    expect(midway.groups.find((group) => group.id === groupId)?.status).toBe('complete');
    expect(midway.steps).toHaveLength(1);
    expect(midway.runs).toEqual(['finished', 'running']);

    await trainToEnd();
    const after = await ledger();
    expect(after.steps.map((step) => step.step)).toEqual([1, 2]);
    expect(after.steps[1]?.groups).toEqual([groupId]);
    expect(after.versions.at(-1)).toBe('agent@2:published');
    expect(after.defaultVersion).toBe('agent@2');
    expect(after.groups.find((group) => group.id === groupId)?.status).toBe('trained');
    // The killed run was left running; the next trainer, taking the policy lease, ended it.
    expect(after.runs).toEqual(['finished', 'interrupted', 'finished']);
    // Every group trained exactly once, by exactly one step; one checkpoint per step.
    const trainedBySteps = after.steps.flatMap((step) => step.groups);
    expect(new Set(trainedBySteps).size).toBe(trainedBySteps.length);
    expect((await readdir(join(outputDir, 'checkpoints'))).filter((name) => /^\d+$/.test(name))).toEqual([
      '0001',
      '0002',
    ]);
    expect((await readOptimizerMoments(join(outputDir, 'checkpoints', '0002'))).step).toBe(2);
  });

  it('SIGTERM mid-cycle: the run ends interrupted, the group goes back, the next run trains it', async () => {
    const { groupId } = await seed(3);
    const run = train('trained');
    const deadline = Date.now() + 90_000;
    while (!run.output().includes('paused at trained')) {
      if (run.child.exitCode !== null) throw new Error(`trainer exited early:\n${run.output()}`);
      if (Date.now() > deadline) {
        run.child.kill('SIGKILL');
        throw new Error(`trainer never reached trained:\n${run.output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    run.child.kill('SIGTERM');
    expect(await run.exited, run.output()).toBe(143);
    const midway = await ledger();
    expect(midway.runs.at(-1)).toBe('interrupted');
    expect(midway.groups.find((group) => group.id === groupId)).toMatchObject({
      status: 'complete',
      owner: null,
    });

    await trainToEnd();
    const after = await ledger();
    expect(after.runs.slice(midway.runs.length)).toEqual(['finished']);
    expect(after.groups.find((group) => group.id === groupId)?.status).toBe('trained');
    expect(after.steps.filter((step) => step.groups.includes(groupId))).toHaveLength(1);
  });
});
