// Fault scenario: a long-running trainer (`edgerl train --every` or `--continuous`: one Trainer, cycle after
// cycle) whose torch engine process is killed in the middle of a step. That cycle fails with
// engine-exited: no version, no step row, the groups handed back. The same trainer's next cycle starts a
// new engine process, resumes from the last checkpoint and trains the groups once. Runs in process on
// either store; needs the torch engine (skipped without it outside CI, where EDGERL_TEST_TORCH=required).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Store } from '../../db/store.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { type Progress, silentProgress } from '../../trainer/train/progress.ts';
import { resolveTrainConfig } from '../../trainer/train/train-config.ts';
import { runCycle, Trainer } from '../../trainer/train/trainer.ts';
import { torchAvailable, torchPython } from '../support/test-engine.ts';
import { seedGroup, seedPolicy } from '../train/support/seed-groups.ts';
import { useTrainerRig } from '../train/support/trainer-rig.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';

let root: string;
let modelDir: string;
let store: Store;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;

const rig = useTrainerRig('edgerl-torch-restart-');

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

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(!torchAvailable())('a torch engine killed mid-step under a long-running trainer', () => {
  it('fails that cycle cleanly; the next cycle starts a new engine and trains the groups once', async (context) => {
    const policyName = 'torch-restart';
    const { base } = await seedPolicy(store, policyName);
    const groupIds: string[] = [];
    for (const seed of [41, 42]) {
      groupIds.push(
        (await seedGroup(store, sampler, tokenizer, { versionId: base.id, rewards: [1, 0, 1, 0], seed }))
          .groupId,
      );
    }
    const lines: string[] = [];
    const progress: Progress = { ...silentProgress, line: (text) => lines.push(text) };
    // The engine reads this when it starts: only the first process pauses in its step.
    process.env.EDGERL_TORCH_PAUSE_IN_STEP = '1';
    let trainer: Trainer;
    try {
      trainer = await Trainer.open(
        resolveTrainConfig({
          policyName,
          modelDir,
          outputDir: join(root, 'out'),
          inference: { baseUrl: `${serving.url}/v1`, timeoutMs: 30_000 },
          owner: `test:${policyName}`,
          engine: { kind: 'torch', python: torchPython() },
          reward: 'verifier',
          groupsPerStep: 2,
          loss: { learningRate: 5e-3, weightDecay: 0, microBatchTokens: 1 },
          lora: { r: 4, alpha: 8, targets: ['q_proj', 'v_proj'] },
        }),
        { store, progress },
      );
    } finally {
      delete process.env.EDGERL_TORCH_PAUSE_IN_STEP;
    }
    try {
      const first = runCycle(trainer);
      await until(() => lines.some((line) => line.includes('paused in step')), 120_000);
      const pid = Number(/torch engine \(pid (\d+)\)/.exec(lines.join('\n'))?.[1]);
      process.kill(pid, 'SIGKILL');
      await expect(first).rejects.toMatchObject({ code: 'engine-exited' });
      const afterFault = {
        published: await count(
          `select count(*) from policy_versions v join policies p on p.id = v.policy_id
            where p.name = $1 and v.version > 0`,
          [policyName],
        ),
        leases: await count(
          'select count(*) from rollout_groups where id = any($1::uuid[]) and lease_owner is not null',
          [groupIds],
        ),
      };
      const report = await runCycle(trainer);
      expect(lines.join('\n')).toContain('has exited; starting a new one');
      const stepRows = await count(
        `select count(*) from training_steps s join training_runs r on r.id = s.training_run_id
           join policies p on p.id = r.policy_id where p.name = $1`,
        [policyName],
      );
      const trained = await count(
        "select count(*) from rollout_groups where id = any($1::uuid[]) and status = 'trained'",
        [groupIds],
      );
      recordFaultOutcome(context, {
        lostTurns: 0,
        duplicates: Math.max(0, stepRows - 1),
        leaks: afterFault.published + afterFault.leases,
      });
      expect(afterFault).toEqual({ published: 0, leases: 0 });
      expect(report).toMatchObject({ kind: 'published', adapterName: `${policyName}@1`, steps: 1 });
      expect({ stepRows, trained }).toEqual({ stepRows: 1, trained: 2 });
    } finally {
      await trainer.close();
    }
  });
});
