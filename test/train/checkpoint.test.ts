// Checkpoints: adapter and AdamW moments round-trip exactly (through the engine-neutral files), a half-written (temporary) directory is
// never listed, markers follow publication, pruning keeps pending checkpoints; and the lease keeper's
// handling of a lost lease.
import * as tf from '@tensorflow/tfjs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../db/errors.ts';
import {
  peftKeyOfVariable,
  readOptimizerMoments,
  transpose,
} from '../../trainer/engine/optimizer-state-file.ts';
import { TfjsEngine } from '../../trainer/engine/tfjs/tfjs-engine.ts';
import {
  type CheckpointState,
  listCheckpoints,
  pruneCheckpoints,
  writeCheckpoint,
  writeCommit,
  writePublication,
} from '../../trainer/train/checkpoint.ts';
import { LeaseKeeper, LeaseLostError } from '../../trainer/train/lease-keeper.ts';
import { lockOutputDir, TrainerBusyError } from '../../trainer/train/output-lock.ts';
import { useWasm, writeTinyModelDir } from './support/tiny-policy.ts';

let root: string;
let modelDir: string;

beforeAll(async () => {
  await useWasm();
  root = await mkdtemp(join(tmpdir(), 'edgerl-checkpoint-'));
  modelDir = join(root, 'model');
  await writeTinyModelDir(modelDir);
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

function state(step: number): CheckpointState {
  return {
    formatVersion: 1,
    kind: 'rl',
    step,
    trainingRunId: '00000000-0000-4000-8000-000000000001',
    policyId: '00000000-0000-4000-8000-000000000002',
    parentVersionId: null,
    groupIds: [`00000000-0000-4000-8000-00000000010${step}`],
    groupReasons: {},
    trajectoryNotes: {},
    steps: [{ step, metrics: { loss: 0.5 }, groupIds: [] }],
    configHash: 'abc',
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}

/** A tfjs engine on the tiny model with a fresh r-2 adapter and AdamW over it. */
async function engineWithAdapter(targets: ('q_proj' | 'v_proj')[] = ['q_proj']): Promise<TfjsEngine> {
  const engine = await TfjsEngine.open(modelDir, { workers: 1, log: () => {} });
  await engine.startAdapter({
    kind: 'fresh',
    settings: { r: 2, alpha: 4, dropout: 0, targets, useRslora: false, initA: 'kaiming-uniform' },
    seed: 2,
  });
  await engine.resetOptimizer({
    learningRate: 0.01,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.1,
    trainA: true,
  });
  return engine;
}

describe('checkpoints', () => {
  it('round-trips the adapter and the optimiser moments exactly, in PEFT names and layout', async () => {
    const dir = join(root, 'roundtrip');
    const engine = await engineWithAdapter(['q_proj', 'v_proj']);
    const variables = engine.runtime.trainableVariables(engine.adapterName);
    const grads = variables.map((variable) => tf.randomNormal(variable.shape, 0, 1, 'float32', 7));
    engine.optimizer.applyGradients(grads);
    engine.optimizer.applyGradients(grads);
    tf.dispose(grads);
    const saved = await engine.optimizer.getState();
    const weights = await Promise.all(variables.map((variable) => variable.data()));

    const checkpoint = await writeCheckpoint(dir, { engine, state: state(1) });
    expect(checkpoint.dir).toBe(join(dir, 'checkpoints', '0001'));
    const restored = await readOptimizerMoments(checkpoint.dir);
    expect(restored.step).toBe(2);
    // Every moment under its matrix's PEFT name, transposed from the runtime's Aᵀ/Bᵀ to A/B.
    expect([...restored.moments.keys()]).toEqual(
      saved.moments.map((moment) => peftKeyOfVariable(moment.name)),
    );
    saved.moments.forEach((moment) => {
      const [rows, columns] = moment.shape as [number, number];
      const file = restored.moments.get(peftKeyOfVariable(moment.name) as string);
      expect(file?.shape).toEqual([columns, rows]);
      expect(file?.m).toEqual(transpose(moment.m, rows, columns));
      expect(file?.v).toEqual(transpose(moment.v, rows, columns));
    });
    // A second engine resumes from the files: the same matrices and the same moments.
    const resumed = await TfjsEngine.open(modelDir, { workers: 1, log: () => {} });
    try {
      await resumed.startAdapter({ kind: 'peft', dir: checkpoint.dir });
      await resumed.resetOptimizer({
        learningRate: 0.01,
        beta1: 0.9,
        beta2: 0.99,
        eps: 1e-8,
        weightDecay: 0.1,
        trainA: true,
      });
      await resumed.loadOptimizer(checkpoint.dir);
      const reloaded = await Promise.all(
        resumed.runtime.trainableVariables(resumed.adapterName).map((variable) => variable.data()),
      );
      for (const [index, data] of reloaded.entries()) expect(data).toEqual(weights[index]);
      const state2 = await resumed.optimizer.getState();
      expect(resumed.optimizerSteps).toBe(2);
      state2.moments.forEach((moment, index) => {
        expect(moment.m).toEqual(saved.moments[index]?.m);
        expect(moment.v).toEqual(saved.moments[index]?.v);
      });
    } finally {
      await resumed.close();
      await engine.close();
    }
  });

  it('never lists a temporary directory, and refuses to overwrite a step', async () => {
    const dir = join(root, 'atomic');
    const engine = await engineWithAdapter();
    await writeCheckpoint(dir, { engine, state: state(1) });
    // What a kill during writeCheckpoint leaves behind: a temporary directory with part of the files.
    await mkdir(join(dir, 'checkpoints', '.tmp-0002-123-abcd'), { recursive: true });
    expect((await listCheckpoints(dir)).map((checkpoint) => checkpoint.state.step)).toEqual([1]);
    await expect(writeCheckpoint(dir, { engine, state: state(1) })).rejects.toThrow(/already exists/);
    await engine.close();
  });

  it('follows publication with markers, and prunes only committed checkpoints beyond the newest N', async () => {
    const dir = join(root, 'prune');
    const engine = await engineWithAdapter();
    for (let step = 1; step <= 4; step++) {
      const written = await writeCheckpoint(dir, { engine, state: state(step) });
      if (step === 4) break; // the newest stays pending
      const published = await writePublication(written, {
        versionId: `v${step}`,
        version: step,
        adapterName: `agent@${step}`,
      });
      await writeCommit(published, {
        versionId: `v${step}`,
        adapterName: `agent@${step}`,
        adapterUri: '/x',
        committedAt: 'now',
      });
    }
    const listed = await listCheckpoints(dir);
    expect(
      listed.map((checkpoint) => [
        checkpoint.state.step,
        checkpoint.publication?.adapterName,
        !!checkpoint.commit,
      ]),
    ).toEqual([
      [1, 'agent@1', true],
      [2, 'agent@2', true],
      [3, 'agent@3', true],
      [4, undefined, false],
    ]);
    // v1 was the best by validation: kept beside the newest two committed and the pending one.
    await pruneCheckpoints(dir, 1, new Set(['v1']));
    expect(await readdir(join(dir, 'checkpoints'))).toEqual(['0001', '0003', '0004']);
    await pruneCheckpoints(dir, 1);
    expect(await readdir(join(dir, 'checkpoints'))).toEqual(['0003', '0004']);
    await engine.close();
  });
});

describe('output lock', () => {
  it("lets one trainer hold an output directory and takes over a dead holder's lock", async () => {
    const dir = join(root, 'locked');
    const lock = lockOutputDir(dir);
    expect(() => lockOutputDir(dir)).toThrow(TrainerBusyError);
    lock.release();
    const again = lockOutputDir(dir);
    again.release();
  });
});

describe('LeaseKeeper', () => {
  it('renews the held groups, and turns a lost lease into LeaseLostError', async () => {
    const renewed: string[][] = [];
    let lose = false;
    const keeper = new LeaseKeeper({
      leaseSeconds: 60,
      renew: async (groupIds) => {
        renewed.push(groupIds);
        if (lose) throw new StoreError('lease-lost', 'trainer-a no longer holds group g2');
      },
    });
    await keeper.ensure(); // nothing held: nothing to renew
    expect(renewed).toEqual([]);
    keeper.hold(['g1', 'g2']);
    await keeper.ensure();
    keeper.drop(['g1']);
    lose = true;
    await expect(keeper.ensure()).rejects.toThrow(LeaseLostError);
    expect(renewed).toEqual([['g1', 'g2'], ['g2']]);
  });

  it('retries after other failures instead of declaring the lease lost', async () => {
    const lines: string[] = [];
    let calls = 0;
    const keeper = new LeaseKeeper({
      leaseSeconds: 60,
      log: (line) => lines.push(line),
      renew: async () => {
        calls += 1;
        if (calls === 1) throw new Error('connection reset');
      },
    });
    keeper.hold(['g1']);
    await keeper.ensure();
    await keeper.ensure();
    expect(calls).toBe(2);
    expect(lines).toEqual(['lease renewal failed, retrying later: connection reset']);
  });
});
