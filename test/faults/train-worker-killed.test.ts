// Fault scenario: a data-parallel gradient worker dies mid-step (its thread is terminated while it has
// micro-batches left, as a crash would end it). The cycle fails with `train-worker-died`: no version
// is published, no step row is recorded, the groups are handed back untrained. The same session's
// next cycle starts fresh workers and trains those groups once. Runs the in-process cycle of
// `edgerl train --once` (Trainer + runCycle), so it works on the embedded store too.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEngineKind } from '../support/test-engine.ts';
import type { Store } from '../../db/store.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { type Progress, silentProgress } from '../../trainer/train/progress.ts';
import { resolveTrainConfig } from '../../trainer/train/train-config.ts';
import { runCycle, Trainer } from '../../trainer/train/trainer.ts';
import { tfjsEngineOf } from '../train/support/tfjs-engine-of.ts';
import { seedGroup, seedPolicy } from '../train/support/seed-groups.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { useTrainerRig } from '../train/support/trainer-rig.ts';

let root: string;
let modelDir: string;
let store: Store;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;

const rig = useTrainerRig('edgerl-worker-killed-');

beforeAll(async () => {
  ({ root, modelDir, sampler, tokenizer, store } = rig);
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
});

afterAll(async () => {
  await serving?.close();
});

async function count(sql: string, params: unknown[]): Promise<number> {
  const [[value]] = (await store.sql.query(sql, params)).rows as [[unknown]];
  return Number(value);
}

/** Versions published after the base, step rows, and group leases held, for the policy. */
async function ledger(policyName: string, groupIds: readonly string[]) {
  return {
    published: await count(
      `select count(*) from policy_versions v join policies p on p.id = v.policy_id
        where p.name = $1 and v.status = 'published' and v.version > 0`,
      [policyName],
    ),
    stepRows: await count(
      `select count(*) from training_steps s join training_runs r on r.id = s.training_run_id
         join policies p on p.id = r.policy_id where p.name = $1`,
      [policyName],
    ),
    leases: await count(
      'select count(*) from rollout_groups where id = any($1::uuid[]) and lease_owner is not null',
      [groupIds],
    ),
    trained: await count(
      "select count(*) from rollout_groups where id = any($1::uuid[]) and status = 'trained'",
      [groupIds],
    ),
  };
}

// Gradient worker threads are the tfjs engine's (trainer/engine/tfjs/workers/); the torch engine's
// processes have their own scenario (test/faults/torch-engine-killed.test.ts).
describe.skipIf(testEngineKind() !== 'tfjs')('a gradient worker dies mid-step', () => {
  it('fails the step cleanly (nothing published, no step row); the next cycle trains once', async (context) => {
    const policyName = 'worker-killed';
    const { base } = await seedPolicy(store, policyName);
    const groupIds: string[] = [];
    for (const seed of [31, 32]) {
      groupIds.push(
        (await seedGroup(store, sampler, tokenizer, { versionId: base.id, rewards: [1, 0, 1, 0], seed }))
          .groupId,
      );
    }
    let trainer: Trainer | undefined;
    let kills = 0;
    const killing: Progress = {
      ...silentProgress,
      // The first micro-batch any worker reports: with one sequence per micro-batch, both workers
      // still have several to go.
      microBatch: () => {
        const workers = trainer && tfjsEngineOf(trainer).workers;
        if (kills > 0 || !workers) return;
        kills += 1;
        void workers.kill(0);
      },
    };
    trainer = await Trainer.open(
      resolveTrainConfig({
        policyName,
        modelDir,
        outputDir: join(root, 'out'),
        inference: { baseUrl: `${serving.url}/v1`, timeoutMs: 30_000 },
        owner: `test:${policyName}`,
        reward: 'verifier',
        groupsPerStep: 2,
        workers: 2,
        // One sequence per micro-batch: four per worker.
        loss: { learningRate: 5e-3, weightDecay: 0, microBatchTokens: 1 },
        lora: { r: 4, alpha: 8, targets: ['q_proj', 'v_proj'] },
      }),
      { store, progress: killing },
    );
    const opened = trainer;
    try {
      expect(tfjsEngineOf(opened).workers?.size).toBe(2);
      await expect(runCycle(opened)).rejects.toMatchObject({ code: 'train-worker-died' });
      expect(kills).toBe(1);
      const afterFault = await ledger(policyName, groupIds);
      const report = await runCycle(opened);
      const after = await ledger(policyName, groupIds);
      recordFaultOutcome(context, {
        lostTurns: 0,
        duplicates: Math.max(0, after.stepRows - 1) + Math.max(0, after.published - 1),
        leaks: afterFault.published + afterFault.stepRows + afterFault.leases + after.leases,
      });
      expect(afterFault).toEqual({ published: 0, stepRows: 0, leases: 0, trained: 0 });
      expect(report).toMatchObject({ kind: 'published', adapterName: `${policyName}@1`, steps: 1 });
      expect(tfjsEngineOf(opened).workers?.running).toBe(2);
      expect(after).toEqual({ published: 1, stepRows: 1, leases: 0, trained: 2 });
    } finally {
      await opened.close();
    }
  });
});
