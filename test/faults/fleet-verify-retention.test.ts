// Fault scenarios for what a fleet serves, against real `edgerl serve-model` processes behind counting
// forwarders and the test store:
// (1) verify: replica B runs with the base-under-adapter-name fault hook (it loads every adapter and
//     answers under its name with the base model). A version is published through the trainer's fleet
//     publication (publishToFleet, the probe computed from the adapter's weights as the trainer's
//     engine does): B is quarantined with the reason, and of N proxied calls through the edge for the
//     version none reaches B. B restarted without the hook is caught up and ready, then takes traffic.
// (2) retention soak: 50 publication cycles of fresh adapters (real PEFT checkpoints with random
//     weights, published through publishToFleet and made the default, then retainAdapters, as the
//     trainer's commit does; no `edgerl train --once`: a real cycle on this 2-core machine takes tens of
//     seconds, 50 of them too long for the suite). Models loaded per replica, files in the serving
//     directory and replica RSS stay flat after the first K; the figures are printed at K, 10 and 50.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapterWithProbe, fleetOf } from '../train/support/adapter-with-probe.ts';
import { type RunningEdge, startEdge } from '../../edge/runtime/node.ts';
import { catchUpFleet } from '../../trainer/train/catch-up-fleet.ts';
import { replicaModels } from '../../trainer/train/publish.ts';
import { publishToFleet } from '../../trainer/train/publish-fleet.ts';
import { retainAdapters } from '../../trainer/train/retain-adapters.ts';
import { seedPolicy } from '../train/support/seed-groups.ts';
import { useTrainerRig } from '../train/support/trainer-rig.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { type ReplicaForwarder, startReplicaForwarder } from './support/replica-forwarder.ts';
import { type ServeModelProcess, startServeModelProcess } from './support/serve-model-process.ts';

const key = 'verify-key';
const names = ['A', 'B'] as const;
type Name = (typeof names)[number];
const hook = { EDGERL_SERVE_FAULT: 'base-under-adapter-name' };

const rig = useTrainerRig('edgerl-fleet-verify-');
const forwarders = {} as Record<Name, ReplicaForwarder>;
const processes = {} as Record<Name, ServeModelProcess | undefined>;
let edge: RunningEdge | undefined;
const url = (name: Name) => forwarders[name].url;

async function startReplica(name: Name, env: Record<string, string> = {}): Promise<void> {
  const started = await startServeModelProcess(rig.modelDir, 'tiny', env);
  processes[name] = started;
  forwarders[name].target(started.port);
}

beforeAll(async () => {
  for (const name of names) forwarders[name] = await startReplicaForwarder();
  await Promise.all([startReplica('A'), startReplica('B', hook)]);
}, 180_000);

afterAll(async () => {
  await edge?.close();
  await Promise.all(names.map((name) => processes[name]?.kill()));
  await Promise.all(names.map((name) => forwarders[name]?.close()));
});

/** Publishes version `index` of `policyId` to `replicas` and commits it as the default where verified. */
async function publishVersion(policyId: string, replicas: string[], servingDir: string, seed: number) {
  const { store } = rig;
  const version = await store.registerPolicyVersion({
    policyId,
    metadata: {},
  });
  const { dir, probe } = await adapterWithProbe(rig.sampler, rig.root, version.adapterName, seed);
  const published = await publishToFleet({
    store,
    versionId: version.id,
    adapterName: version.adapterName,
    sourceDir: dir,
    servingDir,
    fleet: fleetOf(replicas),
    check: { probe, baseModel: 'tiny', tolerance: 0.1 },
  });
  if (!published.ok) throw new Error(`publication failed: ${published.reason}`);
  // The commit's effect (commitTrainingCycle needs a trainer's lease): published, probe recorded for
  // catch-up, verified rows ready, default.
  await store.sql.query(`update policy_versions set metadata = $2::jsonb where id = $1`, [
    version.id,
    JSON.stringify({ probe, checkpoint: dir }),
  ]);
  await store.publishPolicyVersion({ versionId: version.id, adapterUri: published.adapterPath });
  for (const replica of published.acknowledged) {
    await store.recordPublication({ versionId: version.id, replica, state: 'ready' });
  }
  await store.setDefaultVersion({ policyId, versionId: version.id });
  return { version, published };
}

const api = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${edge?.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** `count` proxied chat completions through the edge for `model`, each in its own trajectory. */
async function proxied(policy: string, model: string, count: number): Promise<void> {
  for (let seed = 0; seed < count; seed++) {
    const created = await api('/v1/trajectories', { env: 'outside-agent', policy });
    // The trajectory's key where the edge hands one out (its writer credential), else its id.
    const body = (await created.json()) as { trajectory: { id: string }; key?: string };
    const credential = body.key ?? body.trajectory.id;
    const reply = await api(
      '/v1/chat/completions',
      { model, messages: [{ role: 'user', content: 'Say something.' }], max_tokens: 3, seed },
      { 'x-edgerl-trajectory': credential },
    );
    expect(reply.status, await reply.clone().text()).toBe(200);
  }
  await edge?.queue.idle();
}

const reached = (model: string) =>
  Object.fromEntries(names.map((name) => [name, forwarders[name].completions.get(model) ?? 0])) as Record<
    Name,
    number
  >;

describe('fleet verification with a replica serving the base model under the adapter name', () => {
  it('quarantines it, routes none of the version to it, and catches it up once healthy', async (context) => {
    const { store } = rig;
    const { policy } = await seedPolicy(store, 'verified');
    const { version, published } = await publishVersion(
      policy.id,
      names.map(url),
      join(rig.root, 'serving'),
      7,
    );
    expect(published.acknowledged).toEqual([url('A')]);
    const rows = await store.listPublications({ versionId: version.id });
    const row = rows.find((entry) => entry.replica === url('B'));
    expect(row?.state).toBe('quarantined');
    expect(row?.lastError).toMatch(/^probe: .*(serves the base model|not this adapter)/);

    edge = await startEdge({
      config: {
        upstream: { baseUrl: url('A'), requestTokenIds: true, timeoutMs: 60_000 },
        fleet: { replicas: names.map(url), cacheMs: 0, downMs: 0 },
        apiKeys: [key],
        episodeConcurrency: 2,
        policyTimeoutMs: 60_000,
      },
      port: 0,
      store,
      resumeUnfinished: false,
    });
    const calls = 6;
    await proxied(policy.name, version.adapterName, calls);
    const first = reached(version.adapterName);
    expect(first).toEqual({ A: calls, B: 0 });
    let leaks = first.B;

    // B restarts without the hook; catch-up verifies and marks it ready; then it takes its share.
    await processes.B?.kill();
    await startReplica('B');
    const reports = await catchUpFleet({ store, fleet: fleetOf(names.map(url)), policyName: policy.name });
    expect(reports.find((report) => report.replica === url('B'))?.loaded).toEqual([version.adapterName]);
    const after = await store.listPublications({ versionId: version.id });
    expect(after.find((entry) => entry.replica === url('B'))?.state).toBe('ready');
    await proxied(policy.name, version.adapterName, calls);
    const second = reached(version.adapterName);
    expect(second.B).toBeGreaterThan(0);
    expect(second.A + second.B).toBe(2 * calls);
    leaks += second.A + second.B === 2 * calls ? 0 : 1;
    recordFaultOutcome(context, { lostTurns: 0, duplicates: 0, leaks });
  }, 300_000);
});

/** Resident set of a process, KiB (Linux /proc). */
function rssKiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
}

describe('adapter retention over 50 publication cycles', () => {
  it('keeps models loaded, serving copies and replica memory flat after the first K', async (context) => {
    const { store } = rig;
    const { policy } = await seedPolicy(store, 'soak');
    const servingDir = join(rig.root, 'serving-soak');
    const replicas = names.map(url);
    const keep = 3;
    const figures: { cycle: number; models: number[]; files: number; rssMiB: number[] }[] = [];
    for (let cycle = 1; cycle <= 50; cycle++) {
      await publishVersion(policy.id, replicas, servingDir, 100 + cycle);
      const report = await retainAdapters({
        store,
        fleet: fleetOf(replicas, keep),
        policyName: policy.name,
        servingDir,
      });
      expect(report.replicas.flatMap((replica) => replica.failed)).toEqual([]);
      const models = await Promise.all(
        replicas.map(async (replica) => {
          const listed = await replicaModels({ endpoint: { baseUrl: replica, timeoutMs: 30_000 } });
          return listed.ok ? listed.ids.filter((id) => id.startsWith(`${policy.name}@`)).length : -1;
        }),
      );
      figures.push({
        cycle,
        models,
        files: readdirSync(servingDir).filter((entry) => entry.startsWith(`${policy.name}@`)).length,
        rssMiB: names.map((name) => Math.round(rssKiB(processes[name]?.child.pid) / 1024)),
      });
    }
    const at = (cycle: number) => figures[cycle - 1] as (typeof figures)[number];
    const line = (cycle: number) =>
      `cycle ${cycle}: models loaded A=${at(cycle).models[0]} B=${at(cycle).models[1]}, serving copies ${at(cycle).files}, RSS A=${at(cycle).rssMiB[0]} MiB B=${at(cycle).rssMiB[1]} MiB`;
    console.log(`retention soak (K=${keep}):\n  ${[keep, 10, 50].map(line).join('\n  ')}`);
    for (const figure of figures.slice(keep - 1)) {
      expect(figure.models).toEqual([keep, keep]);
      expect(figure.files).toBe(keep);
    }
    // Memory: flat, not growing per version (each tiny adapter is ~0.1 MiB; 47 kept would show).
    const growth = Math.max(
      ...names.map((_, index) => (at(50).rssMiB[index] as number) - (at(10).rssMiB[index] as number)),
    );
    console.log(`retention soak: RSS growth from cycle 10 to 50 at most ${growth} MiB`);
    const rows = await store.listPublications({ policyId: policy.id });
    const leaks = Math.max(0, rows.length - keep * replicas.length);
    recordFaultOutcome(context, { lostTurns: 0, duplicates: 0, leaks });
    expect(leaks).toBe(0);
  }, 600_000);
});
