// Fault scenario: the RULER judge fails (5xx, then garbage, then timeouts) for three trainer runs and
// then recovers. Each run is the in-process cycle `edgerl train --once` runs (TrainerSession + runCycle,
// as cli/train/run-train-job.ts), so it works on the embedded store too. While the judge fails, groups
// stay `unscored` with their attempts, last error and next_score_at in SQL; after recovery each is
// scored and trained exactly once; a group whose attempts run out ends `failed`, named as such.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEngineSettings } from '../support/test-engine.ts';
import type { Store } from '../../db/store.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { scoreAttemptsExhausted } from '../../protocol/score-retry.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { createJudgeClient } from '../../trainer/ruler/judge-client.ts';
import { resolveRulerConfig } from '../../trainer/ruler/ruler-config.ts';
import { silentProgress } from '../../trainer/train/progress.ts';
import { resolveTrainConfig } from '../../trainer/train/train-config.ts';
import { runCycle, Trainer } from '../../trainer/train/trainer.ts';
import {
  answerWith,
  type JudgeBehaviour,
  type JudgeServer,
  startJudgeServer,
} from '../doubles/judge-server.ts';
import { seedGroup, seedPolicy } from '../train/support/seed-groups.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { useTrainerRig } from '../train/support/trainer-rig.ts';

let root: string;
let modelDir: string;
let store: Store;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;
let judge: JudgeServer;

const rig = useTrainerRig('edgerl-judge-outage-');

beforeAll(async () => {
  ({ root, modelDir, sampler, tokenizer, store } = rig);
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
  judge = await startJudgeServer();
});

afterAll(async () => {
  await serving?.close();
  await judge?.close();
});

// One call per judging (no per-call retries), and a timeout short enough for the `hang` behaviour.
const rulerConfig = resolveRulerConfig({
  baseUrl: 'http://127.0.0.1:1/v1',
  model: 'judge-double',
  maxRetries: 0,
  timeoutMs: 1_000,
});

/** One `edgerl train --once` run, in process: open, one cycle, end. */
async function trainOnce(policyName: string, maxAttempts: number) {
  const config = resolveTrainConfig({
    policyName,
    modelDir,
    outputDir: join(root, `out-${policyName}`),
    inference: { baseUrl: `${serving.url}/v1`, timeoutMs: 30_000 },
    owner: `test:${policyName}`,
    engine: testEngineSettings(),
    reward: 'ruler',
    groupsPerStep: 4,
    // Waits of 0.1–0.2 s: long enough to be seen in SQL, short enough to wait out.
    scoreRetry: { maxAttempts, baseSeconds: 0.2, capSeconds: 0.2 },
    loss: { learningRate: 5e-3, weightDecay: 0 },
    lora: { r: 4, alpha: 8, targets: ['q_proj', 'v_proj'] },
  });
  const ruler = { ...rulerConfig, baseUrl: judge.baseUrl };
  const session = await Trainer.open(config, {
    store,
    progress: silentProgress,
    judge: { config: ruler, client: createJudgeClient(ruler) },
  });
  try {
    return await runCycle(session);
  } finally {
    await session.close();
  }
}

async function rows(sql: string, params: unknown[]): Promise<unknown[][]> {
  return (await store.sql.query(sql, params)).rows as unknown[][];
}

interface GroupState {
  status: string;
  attempts: number;
  lastError: string | null;
  nextScoreAt: unknown;
  owner: unknown;
  reason: string | null;
}

async function groupStates(groupIds: readonly string[]): Promise<GroupState[]> {
  const found = await rows(
    `select status, score_attempts, last_score_error, next_score_at, lease_owner, status_reason
       from rollout_groups where id = any($1::uuid[]) order by created_at`,
    [groupIds],
  );
  return found.map(([status, attempts, lastError, nextScoreAt, owner, reason]) => ({
    status: String(status),
    attempts: Number(attempts),
    lastError: lastError as string | null,
    nextScoreAt,
    owner,
    reason: reason as string | null,
  }));
}

/** Until every listed group's next_score_at has passed (the store's clock decides, not ours). */
async function waitOutBackoff(groupIds: readonly string[]): Promise<void> {
  for (;;) {
    const [[waiting]] = (await rows(
      'select count(*) from rollout_groups where id = any($1::uuid[]) and next_score_at > now()',
      [groupIds],
    )) as [[unknown]];
    if (Number(waiting) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Leases held, runs left running, for a policy's groups and runs. */
async function leaks(groupIds: readonly string[], policyName: string): Promise<number> {
  const [[leases]] = (await rows(
    'select count(*) from rollout_groups where id = any($1::uuid[]) and lease_owner is not null',
    [groupIds],
  )) as [[unknown]];
  const [[running]] = (await rows(
    `select count(*) from training_runs r join policies p on p.id = r.policy_id
      where p.name = $1 and r.status = 'running'`,
    [policyName],
  )) as [[unknown]];
  const [[policyLeases]] = (await rows(
    'select count(*) from policy_leases l join policies p on p.id = l.policy_id where p.name = $1 and l.expires_at > now()',
    [policyName],
  )) as [[unknown]];
  return Number(leases) + Number(running) + Number(policyLeases);
}

const failures: readonly (readonly [string, JudgeBehaviour])[] = [
  ['a 5xx', { kind: 'status', status: 503 }],
  ['garbage JSON', { kind: 'raw', content: 'scores: {not json' }],
  ['a timeout', { kind: 'hang', ms: 3_000 }],
];

describe('the judge fails for a while, then recovers', () => {
  it('keeps groups retryable with their attempts in SQL, then scores and trains each once', async (context) => {
    const policyName = 'outage-agent';
    const { base } = await seedPolicy(store, policyName);
    const groupIds: string[] = [];
    for (const seed of [21, 22]) {
      groupIds.push(
        (await seedGroup(store, sampler, tokenizer, { versionId: base.id, rewards: [0, 0, 0, 0], seed }))
          .groupId,
      );
    }
    const calls = () => judge.requests.length;

    for (const [round, [what, behaviour]] of failures.entries()) {
      await waitOutBackoff(groupIds);
      const before = calls();
      judge.enqueue(behaviour, behaviour);
      const report = await trainOnce(policyName, 5);
      expect(report, what).toEqual({ kind: 'idle', setAside: 0, stale: 0 });
      expect(calls() - before, what).toBe(2);
      const states = await groupStates(groupIds);
      for (const state of states) {
        expect(state, what).toMatchObject({ status: 'unscored', attempts: round + 1, owner: null });
        expect(state.lastError, what).toBeTruthy();
        expect(state.nextScoreAt, what).not.toBeNull();
      }
    }
    const [first] = await groupStates(groupIds);
    expect(first?.lastError).toMatch(/timeout/i);

    // Recovered: one judging per group, then one step trains both.
    await waitOutBackoff(groupIds);
    judge.enqueue(
      answerWith((block) => block.position / 4),
      answerWith((block) => block.position / 4),
    );
    const recovered = await trainOnce(policyName, 5);
    expect(recovered).toMatchObject({ kind: 'published', adapterName: `${policyName}@1` });
    // Nothing left to do: no call, no training.
    const idle = await trainOnce(policyName, 5);
    expect(idle).toEqual({ kind: 'idle', setAside: 0, stale: 0 });
    judge.verify();

    const states = await groupStates(groupIds);
    expect(states.map((state) => [state.status, state.attempts, state.nextScoreAt])).toEqual([
      ['trained', 3, null],
      ['trained', 3, null],
    ]);
    const stepGroups = (
      await rows(
        `select unnest(s.group_ids)::text from training_steps s join training_runs r on r.id = s.training_run_id
          join policies p on p.id = r.policy_id where p.name = $1`,
        [policyName],
      )
    ).map(([groupId]) => String(groupId));
    const scoreRows = await rows(
      `select t.group_id::text, count(*) from judge_scores j join trajectories t on t.id = j.trajectory_id
        where t.group_id = any($1::uuid[]) group by t.group_id`,
      [groupIds],
    );
    const trajectoriesWithTurns = await rows(
      `select count(*) from trajectories t where t.group_id = any($1::uuid[])
          and t.turn_count = (select count(*) from turns u where u.trajectory_id = t.id)`,
      [groupIds],
    );
    const lostTurns = 8 - Number(trajectoriesWithTurns[0]?.[0]);
    const duplicates =
      stepGroups.length -
      new Set(stepGroups).size +
      scoreRows.reduce((sum, [, count]) => sum + Number(count) - 4, 0);
    const leaked = await leaks(groupIds, policyName);
    recordFaultOutcome(context, { lostTurns, duplicates, leaks: leaked });
    expect([...stepGroups].sort()).toEqual([...groupIds].sort());
    expect(scoreRows).toHaveLength(2);
    expect(lostTurns).toBe(0);
    expect(duplicates).toBe(0);
    expect(leaked).toBe(0);
  });

  it('gives a group up after its last attempt, with a reason that says so', async (context) => {
    const policyName = 'outage-given-up';
    const { base } = await seedPolicy(store, policyName);
    const { groupId } = await seedGroup(store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [0, 0, 0, 0],
      seed: 23,
    });
    for (const [, behaviour] of failures.slice(0, 2)) {
      await waitOutBackoff([groupId]);
      judge.enqueue(behaviour);
      expect(await trainOnce(policyName, 2)).toEqual({ kind: 'idle', setAside: 0, stale: 0 });
    }
    const [state] = await groupStates([groupId]);
    expect(state).toMatchObject({ status: 'failed', attempts: 2, nextScoreAt: null, owner: null });
    expect(state?.reason).toMatch(
      new RegExp(`^${scoreAttemptsExhausted}: the judge failed 2 time\\(s\\); last: `),
    );
    // Never judged again.
    const before = judge.requests.length;
    expect(await trainOnce(policyName, 2)).toEqual({ kind: 'idle', setAside: 0, stale: 0 });
    expect(judge.requests.length).toBe(before);
    judge.verify();
    const leaked = await leaks([groupId], policyName);
    recordFaultOutcome(context, { lostTurns: 0, duplicates: 0, leaks: leaked });
    expect(leaked).toBe(0);
  });
});
