// Continuous training while rollouts run (tiny model, real store, the local inference endpoint for
// publication): a producer keeps writing episodes, each group sampled by the policy's default at its
// start, two episodes in flight at a time, while runContinuous trains whenever a step's worth of
// groups is complete and publishes each version. The store shows the overlap: episodes that started
// before a training step ended and ended after it started (the step's own groups aside), groups
// sampled by the versions the trainer published meanwhile, and each step's staleness and importance
// statistics (--continuous turns the correction on).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import type { ChatMessage } from '../../protocol/chat.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { silentProgress } from '../../trainer/train/progress.ts';
import { runContinuous } from '../../trainer/train/run-continuous.ts';
import { resolveTrainConfig } from '../../trainer/train/train-config.ts';
import { Trainer } from '../../trainer/train/trainer.ts';
import { uniqueName } from '../support/fixtures.ts';
import { seedPolicy } from './support/seed-groups.ts';
import { sampleTurn } from './support/tiny-policy.ts';
import { useTrainerRig } from './support/trainer-rig.ts';

let root: string;
let modelDir: string;
let store: Store;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;

const rig = useTrainerRig('edgerl-async-overlap-');

beforeAll(async () => {
  ({ root, modelDir, sampler, tokenizer, store } = rig);
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
});

afterAll(async () => {
  await serving?.close();
});

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One episode: started (its row's started_at), its assistant turn sampled, a pause standing in for
 * the environment's tool calls, then finished with `reward`. Returns when it has ended.
 */
async function episode(groupId: string, seed: number, reward: number): Promise<void> {
  const prompt: ChatMessage[] = [
    { role: 'system', content: 'Answer in one word.' },
    { role: 'user', content: `What is ${seed % 97} + 1?` },
  ];
  const trajectory = await store.startTrajectory({ groupId });
  const turn = await sampleTurn(sampler, tokenizer, prompt, { seed });
  for (const [index, message] of prompt.entries()) {
    await store.appendTurn({
      trajectoryId: trajectory.id,
      index,
      role: message.role,
      content: message.content as string,
    });
  }
  await store.appendTurn({
    trajectoryId: trajectory.id,
    index: prompt.length,
    role: 'assistant',
    content: turn.content,
    completionTokenIds: turn.completionTokenIds,
    completionLogprobs: turn.completionLogprobs,
    servedBy: 'tiny',
  });
  await pause(40);
  await store.finishTrajectory({ trajectoryId: trajectory.id, status: 'finished', verifierReward: reward });
}

/**
 * Groups of 4 episodes until `stopping()`, each group sampled by the policy's default version when
 * it starts; the next episode starts before the one before it ends (two in flight), so from the
 * first start to the last end some episode is always running.
 */
async function produce(policyId: string, stopping: () => boolean): Promise<number> {
  const task = await store.upsertTask({ env: 'tiny-test', key: uniqueName('task'), input: {} });
  let groups = 0;
  let previous: Promise<void> = Promise.resolve();
  while (!stopping()) {
    const head = await store.getDefaultVersion({ policyId });
    const group = await store.createGroup({ taskId: task.id, size: 4, policyVersionId: head?.id });
    for (let slot = 0; slot < 4; slot++) {
      const running = episode(group.id, 1000 * groups + slot, slot % 2);
      await previous;
      previous = running;
    }
    groups += 1;
  }
  await previous;
  return groups;
}

describe('edgerl train --continuous', () => {
  it('trains while rollouts run: episodes overlap the steps in time, later groups are sampled by the new versions', async () => {
    const { policy } = await seedPolicy(store, 'async-agent');
    const config = resolveTrainConfig({
      policyName: 'async-agent',
      modelDir,
      outputDir: join(root, 'out'),
      inference: { baseUrl: `${serving.url}/v1`, timeoutMs: 30_000 },
      owner: 'test:async-agent',
      reward: 'verifier',
      continuous: true,
      groupsPerStep: 2,
      workers: 1,
      loss: { learningRate: 5e-3, weightDecay: 0 },
      lora: { r: 4, alpha: 8, targets: ['q_proj', 'v_proj'] },
    });
    expect(config.offPolicy.correction).toBe('tis'); // --continuous's default
    const session = await Trainer.open(config, { store, progress: silentProgress });
    let published = 0;
    let producing = true;
    try {
      const producer = produce(policy.id, () => !producing);
      const outcome = await runContinuous(session, {
        stopping: () => published >= 3,
        pollMs: 20,
        wait: pause,
        onCycle: (report) => {
          if (report.kind === 'published') published += 1;
        },
        onError: (error) => {
          throw error;
        },
      });
      producing = false;
      await producer;
      expect(outcome).toMatchObject({ published: 3, failures: 0, lastFailed: false });
    } finally {
      producing = false;
      await session.close();
    }

    // Every step ran while some episode it did not train on was running.
    const { rows: steps } = await store.sql.query(
      `select s.step, s.metrics, s.started_at, s.finished_at,
              (select count(*)::int from trajectories t
                 join rollout_groups g on g.id = t.group_id
                where g.task_id in (select task_id from rollout_groups where id = any(s.group_ids))
                  and not (t.group_id = any(s.group_ids))
                  and t.started_at < s.finished_at and t.finished_at > s.started_at) as overlapping
         from training_steps s join training_runs r on r.id = s.training_run_id
        where r.policy_id = $1 order by s.step`,
      [policy.id],
    );
    expect(steps.length).toBe(3);
    for (const [step, metrics, startedAt, , overlapping] of steps as [
      number,
      Record<string, number>,
      Date,
      Date,
      number,
    ][]) {
      expect(startedAt, `step ${step}`).not.toBeNull();
      expect(overlapping, `episodes running during step ${step}`).toBeGreaterThan(0);
      // The correction's statistics are in every step, under the default cap of 2.
      expect(metrics['is/weight_max'], `step ${step}`).toBeLessThanOrEqual(2);
      expect(metrics['staleness/max'], `step ${step}`).toBeLessThanOrEqual(4);
      expect(metrics['groups/stale'], `step ${step}`).toBe(0);
    }
    // Rollouts kept going with each new default: groups sampled by versions the trainer published.
    const { rows: samplers } = await store.sql.query(
      `select distinct v.version from rollout_groups g join policy_versions v on v.id = g.policy_version_id
        where v.policy_id = $1 order by v.version`,
      [policy.id],
    );
    expect((samplers as [number][]).map(([version]) => version).length).toBeGreaterThanOrEqual(2);
    // A trained group sampled by an earlier version than the one it was trained from is counted stale
    // (behind the head) in its step; at least one step trained one.
    const staleness = (steps as [number, Record<string, number>][]).map(
      ([, metrics]) => metrics['staleness/max'],
    );
    expect(Math.max(...(staleness as number[]))).toBeGreaterThan(0);
  });
});
