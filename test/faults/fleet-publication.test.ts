// Fault scenario: a fleet of three real `edgerl serve-model` processes (A, B, C), each behind a stable
// address that counts the completions reaching it. The trainer publishes a new version to all three
// and C is SIGKILLed mid-publication (loaded, not yet verified): the version is committed with A and
// B, C is quarantined for it, and the edge (EDGERL_INFERENCE_REPLICAS = A, B, C) sends its requests, from
// episodes and through the recording proxy, to A and B only. C restarts empty and is caught up by the
// trainer's next cycle; then it takes the version's traffic too. Last, B restarts and loses the
// version while the store still says ready: the edge's first 404 from it fails over and quarantines
// it, and catch-up brings it back. Every step is checked in SQL (publications).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEngineSettings } from '../support/test-engine.ts';
import type { Store } from '../../db/store.ts';
import { type RunningEdge, startEdge } from '../../edge/runtime/node.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { silentProgress } from '../../trainer/train/progress.ts';
import { resolveTrainConfig } from '../../trainer/train/train-config.ts';
import { runCycle, Trainer } from '../../trainer/train/trainer.ts';
import type { HookPoint } from '../../trainer/train/trainer-session.ts';
import { seedGroup, seedPolicy } from '../train/support/seed-groups.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { type ReplicaForwarder, startReplicaForwarder } from './support/replica-forwarder.ts';
import { type ServeModelProcess, startServeModelProcess } from './support/serve-model-process.ts';
import { useTrainerRig } from '../train/support/trainer-rig.ts';

const key = 'fleet-key';
const names = ['A', 'B', 'C'] as const;
type Name = (typeof names)[number];

let root: string;
let modelDir: string;
let store: Store;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;
const forwarders = {} as Record<Name, ReplicaForwarder>;
const processes = {} as Record<Name, ServeModelProcess | undefined>;
let edge: RunningEdge | undefined;

async function startReplica(name: Name): Promise<void> {
  const started = await startServeModelProcess(modelDir, 'tiny');
  processes[name] = started;
  forwarders[name].target(started.port);
}

async function killReplica(name: Name): Promise<void> {
  forwarders[name].target(undefined);
  await processes[name]?.kill();
  processes[name] = undefined;
}

const rig = useTrainerRig('edgerl-fleet-');

beforeAll(async () => {
  ({ root, modelDir, sampler, tokenizer, store } = rig);
  for (const name of names) forwarders[name] = await startReplicaForwarder();
  await Promise.all(names.map((name) => startReplica(name)));
}, 180_000);

afterAll(async () => {
  await edge?.close();
  await Promise.all(names.map((name) => processes[name]?.kill()));
  await Promise.all(names.map((name) => forwarders[name]?.close()));
});

const url = (name: Name) => forwarders[name].url;

/** The publications rows of a version: replica name → [state, attempts, last error]. */
async function rows(adapterName: string): Promise<Record<string, [string, number, string | null]>> {
  const result = await store.sql.query(
    `select p.replica, p.state, p.attempts, p.last_error from publications p
       join policy_versions v on v.id = p.policy_version_id where v.adapter_name = $1`,
    [adapterName],
  );
  const byUrl = new Map(names.map((name) => [url(name), name]));
  return Object.fromEntries(
    result.rows.map(([replica, state, attempts, error]) => [
      byUrl.get(String(replica)) ?? String(replica),
      [String(state), Number(attempts), error === null ? null : String(error)],
    ]),
  );
}

/** Completions for `model` that reached each replica, as the forwarders counted them. */
function reached(model: string): Record<Name, number> {
  return Object.fromEntries(
    names.map((name) => [name, forwarders[name].completions.get(model) ?? 0]),
  ) as Record<Name, number>;
}

function delta(before: Record<Name, number>, after: Record<Name, number>): Record<Name, number> {
  return Object.fromEntries(names.map((name) => [name, after[name] - before[name]])) as Record<Name, number>;
}

const api = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${edge?.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** Two rollout groups and two proxied calls on policy `agent` (its default version); every episode must end. */
async function traffic(): Promise<{ trajectories: string[]; proxied: number }> {
  const trajectories: string[] = [];
  for (const seed of [1, 2]) {
    const response = await api('/v1/rollouts', {
      env: 'multi-hop',
      groupSize: 3,
      taskSeed: seed,
      policy: 'agent',
      settings: { maxTokens: 6, seed },
    });
    expect(response.status).toBe(202);
    trajectories.push(...((await response.json()) as { trajectoryIds: string[] }).trajectoryIds);
  }
  let proxied = 0;
  for (const seed of [3, 4]) {
    const created = await api('/v1/trajectories', { env: 'outside-agent', policy: 'agent' });
    const { key } = (await created.json()) as { key: string };
    const reply = await api(
      '/v1/chat/completions',
      { model: 'agent', messages: [{ role: 'user', content: 'Say something.' }], max_tokens: 4, seed },
      { 'x-edgerl-trajectory': key },
    );
    expect(reply.status, await reply.clone().text()).toBe(200);
    proxied += 1;
  }
  await edge?.queue.idle();
  return { trajectories, proxied };
}

describe('fleet publication with a replica killed mid-publication', () => {
  it('commits on the replicas that acknowledged, routes only to them, and catches the others up', async (context) => {
    const { policy, base } = await seedPolicy(store, 'agent');
    for (const seed of [1, 2]) {
      await seedGroup(store, sampler, tokenizer, { versionId: base.id, rewards: [1, 0, 0, 1], seed });
    }
    const config = resolveTrainConfig({
      policyName: 'agent',
      modelDir,
      outputDir: join(root, 'train'),
      inference: { baseUrl: names.map(url), timeoutMs: 30_000 },
      owner: 'fleet-test',
      engine: testEngineSettings(),
      reward: 'verifier',
      groupsPerStep: 2,
      loss: { learningRate: 5e-3, weightDecay: 0 },
      lora: { r: 4, alpha: 8, targets: ['q_proj', 'v_proj'] },
    });
    const lines: string[] = [];
    // C dies after every replica loaded the adapter and before any verified it.
    const hook = async (point: HookPoint) => {
      if (point === 'prepared') await killReplica('C');
    };
    const session = await Trainer.open(config, {
      store,
      progress: { ...silentProgress, line: (text) => lines.push(text) },
      hook,
    });
    let leaks = 0;
    let lost = 0;
    let duplicates = 0;
    try {
      const report = await runCycle(session);
      expect(report).toMatchObject({
        kind: 'published',
        adapterName: 'agent@1',
        replicas: [url('A'), url('B')],
      });
      expect(lines.join('\n')).toMatch(/quarantined for agent@1 \((list|probe): .*\); catch-up retries it/);
      const afterKill = await rows('agent@1');
      expect(afterKill.A?.slice(0, 2)).toEqual(['ready', 1]);
      expect(afterKill.B?.slice(0, 2)).toEqual(['ready', 1]);
      expect(afterKill.C?.[0]).toBe('quarantined');
      expect(afterKill.C?.[2]).toMatch(/^(list|probe): /);
      lost += ['A', 'B'].filter((name) => afterKill[name]?.[0] !== 'ready').length;
      expect((await store.getDefaultVersion({ policyId: policy.id }))?.adapterName).toBe('agent@1');

      // The edge knows the fleet; agent's default (agent@1) goes to A and B only.
      edge = await startEdge({
        config: {
          upstream: { baseUrl: url('A'), requestTokenIds: true, timeoutMs: 60_000 },
          // downMs 0: a replica that refused a connection is not set aside, so the routing seen
          // below is the store's doing alone.
          fleet: { replicas: names.map(url), cacheMs: 200, downMs: 0 },
          apiKeys: [key],
          episodeConcurrency: 3,
          policyTimeoutMs: 60_000,
        },
        port: 0,
        store,
        resumeUnfinished: false,
      });
      let before = reached('agent@1');
      const first = await traffic();
      const routed = delta(before, reached('agent@1'));
      expect(routed.C).toBe(0);
      expect(routed.A).toBeGreaterThan(0);
      expect(routed.B).toBeGreaterThan(0);
      leaks += routed.C;

      // C restarts with the base model only; until caught up it takes none of agent@1's traffic.
      await startReplica('C');
      before = reached('agent@1');
      const second = await traffic();
      expect(delta(before, reached('agent@1')).C).toBe(0);
      leaks += delta(before, reached('agent@1')).C;

      // The trainer's next cycle catches C up before it trains (the rollouts' groups, all rewarded
      // alike by the random model, carry no signal: nothing new is published).
      lines.length = 0;
      expect(['idle', 'no-signal']).toContain((await runCycle(session)).kind);
      expect(lines).toContain(`catch-up: ${url('C')}: loaded agent@1`);
      const caughtUp = await rows('agent@1');
      expect(caughtUp.C?.slice(0, 2)).toEqual(['ready', 2]);
      expect(caughtUp.C?.[2]).toMatch(/^(list|probe): /);
      lost += caughtUp.C?.[0] === 'ready' ? 0 : 1;
      before = reached('agent@1');
      const third = await traffic();
      expect(delta(before, reached('agent@1')).C).toBeGreaterThan(0);

      // B restarts and loses agent@1 while its row still says ready: the edge fails over on B's 404
      // (no request fails) and quarantines B; catch-up loads it there again.
      await killReplica('B');
      await startReplica('B');
      const fourth = await traffic();
      const lostB = await rows('agent@1');
      expect(lostB.B?.[0]).toBe('quarantined');
      expect(lostB.B?.[2]).toMatch(/^edge: 404 for agent@1/);
      expect(['idle', 'no-signal']).toContain((await runCycle(session)).kind);
      expect((await rows('agent@1')).B?.slice(0, 2)).toEqual(['ready', 2]);

      // Every episode ended (none in error: no request was left without a replica), each turn says
      // which replica answered, and only replicas of the fleet did.
      const all = [first, second, third, fourth].flatMap((run) => run.trajectories);
      const ended = await store.sql.query(
        `select t.status, count(*)::int from trajectories t where t.id = any($1::uuid[]) group by t.status`,
        [all],
      );
      const statuses = Object.fromEntries(
        ended.rows.map(([status, count]) => [String(status), Number(count)]),
      );
      expect(statuses.error ?? 0).toBe(0);
      expect(statuses.running ?? 0).toBe(0);
      leaks += statuses.running ?? 0;
      const answeredBy = await store.sql.query(
        `select distinct u.metadata->>'replica' from turns u where u.trajectory_id = any($1::uuid[]) and u.role = 'assistant'`,
        [all],
      );
      const replicasSeen = answeredBy.rows.map(([replica]) => String(replica)).sort();
      expect(replicasSeen.every((replica) => names.map(url).includes(replica))).toBe(true);

      // One trained version, published once, one row per replica.
      const [[versions, publicationRows]] = (
        await store.sql.query(
          `select (select count(*)::int from policy_versions v where v.policy_id = $1 and v.status = 'published' and v.version > 0),
                  (select count(*)::int from publications p join policy_versions v on v.id = p.policy_version_id where v.policy_id = $1)`,
          [policy.id],
        )
      ).rows as [[number, number]];
      duplicates += versions - 1 + (publicationRows - names.length);
      expect([versions, publicationRows]).toEqual([1, 3]);
    } finally {
      await session.close();
    }
    recordFaultOutcome(context, { lostTurns: lost, duplicates, leaks });
    expect({ lost, duplicates, leaks }).toEqual({ lost: 0, duplicates: 0, leaks: 0 });
  }, 300_000);
});
