// Fleet verification and adapter retention against real `edgerl serve-model` processes and the test
// store. Verify: a replica started with the base-under-adapter-name fault hook lists the adapter and
// answers, yet is quarantined with a reason naming the base model, while a healthy one is
// acknowledged (the probe is the reference model's own logprobs, as the trainer's engine records
// them). Retention: with a default, a running experiment's arm and older versions loaded, exactly
// the versions nothing routes to are unloaded, their rows removed and their serving copies pruned;
// catch-up does not load them again.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapterWithProbe, fleetOf } from './support/adapter-with-probe.ts';
import { catchUpFleet } from '../../trainer/train/catch-up-fleet.ts';
import { publishToFleet } from '../../trainer/train/publish-fleet.ts';
import { replicaModels } from '../../trainer/train/publish.ts';
import { retainAdapters } from '../../trainer/train/retain-adapters.ts';
import { type ServeModelProcess, startServeModelProcess } from '../faults/support/serve-model-process.ts';
import { seedPolicy } from './support/seed-groups.ts';
import { useTrainerRig } from './support/trainer-rig.ts';

const rig = useTrainerRig('edgerl-verify-');
let healthy: ServeModelProcess;
let hooked: ServeModelProcess;
const url = (replica: ServeModelProcess) => `http://127.0.0.1:${replica.port}/v1`;

beforeAll(async () => {
  [healthy, hooked] = await Promise.all([
    startServeModelProcess(rig.modelDir, 'tiny'),
    startServeModelProcess(rig.modelDir, 'tiny', { EDGERL_SERVE_FAULT: 'base-under-adapter-name' }),
  ]);
}, 180_000);
afterAll(async () => {
  await Promise.all([healthy?.kill(), hooked?.kill()]);
});

describe('fleet verification', () => {
  it('quarantines a replica that serves the base model under the adapter name, and acknowledges a healthy one', async () => {
    const { store } = rig;
    const { policy } = await seedPolicy(store);
    const version = await store.registerPolicyVersion({ policyId: policy.id });
    const { dir, probe } = await adapterWithProbe(rig.sampler, rig.root, version.adapterName, 5);
    const outcome = await publishToFleet({
      store,
      versionId: version.id,
      adapterName: version.adapterName,
      sourceDir: dir,
      servingDir: join(rig.root, 'serving'),
      fleet: fleetOf([url(healthy), url(hooked)]),
      check: { probe, baseModel: 'tiny', tolerance: 0.1 },
    });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.acknowledged).toEqual([url(healthy)]);
    expect(outcome.failed).toHaveLength(1);
    expect(outcome.failed[0]?.reason).toMatch(/serves the base model|not this adapter/);
    const rows = await store.listPublications({ versionId: version.id });
    const state = Object.fromEntries(rows.map((row) => [row.replica, [row.state, row.lastError]]));
    expect(state[url(healthy)]?.[0]).toBe('verified');
    expect(state[url(hooked)]?.[0]).toBe('quarantined');
    expect(state[url(hooked)]?.[1]).toMatch(/^probe: /);
    // Both list the name and answer a completion: the old check would have passed the hooked one.
    const listed = await replicaModels({ endpoint: { baseUrl: url(hooked), timeoutMs: 30_000 } });
    expect(listed.ok && listed.ids).toContain(version.adapterName);

    // Even with a tolerance loose enough to accept the base model's answer, the base check fails it.
    const loose = await publishToFleet({
      store,
      versionId: version.id,
      adapterName: version.adapterName,
      sourceDir: dir,
      servingDir: join(rig.root, 'serving'),
      fleet: fleetOf([url(hooked)]),
      check: { probe, baseModel: 'tiny', tolerance: 1e6 },
    });
    expect(loose.ok && loose.failed[0]?.reason).toMatch(/serves the base model/);
  }, 120_000);
});

describe('adapter retention', () => {
  it('unloads and prunes exactly the versions nothing routes to', async () => {
    const { store } = rig;
    const { policy } = await seedPolicy(store);
    const servingDir = join(rig.root, 'serving-retention');
    const versions = [];
    // v1 … v6 published on the healthy replica; v2 is made the default; v3 and v6 are an experiment's arms.
    for (let index = 1; index <= 6; index++) {
      const version = await store.registerPolicyVersion({ policyId: policy.id });
      const { dir, probe } = await adapterWithProbe(rig.sampler, rig.root, version.adapterName, 10 + index);
      const published = await publishToFleet({
        store,
        versionId: version.id,
        adapterName: version.adapterName,
        sourceDir: dir,
        servingDir,
        fleet: fleetOf([url(healthy)]),
        check: { probe, baseModel: 'tiny', tolerance: 0.1 },
      });
      expect(published.ok && published.acknowledged).toEqual([url(healthy)]);
      if (!published.ok) return;
      // The commit's effect on these rows (commitTrainingCycle needs a trainer's lease).
      await store.publishPolicyVersion({ versionId: version.id, adapterUri: published.adapterPath });
      await store.recordPublication({ versionId: version.id, replica: url(healthy), state: 'ready' });
      versions.push(version);
    }
    type Version = (typeof versions)[number];
    const [v1, v2, v3, v4, v5, v6] = versions as [Version, Version, Version, Version, Version, Version];
    await store.setDefaultVersion({ policyId: policy.id, versionId: v2.id });
    await store.createExperiment({
      name: `retention-${policy.name}`,
      arms: [{ policyVersionId: v3.id }, { policyVersionId: v6.id }],
    });

    // keep 2 newest (v5, v6) + default v2 + arms v3, v6: v1 and v4 go.
    const report = await retainAdapters({
      store,
      fleet: fleetOf([url(healthy)], 2),
      policyName: policy.name,
      servingDir,
    });
    expect(report.replicas[0]?.unloaded.sort()).toEqual([v1.adapterName, v4.adapterName].sort());
    const listed = await replicaModels({ endpoint: { baseUrl: url(healthy), timeoutMs: 30_000 } });
    const ids = listed.ok ? listed.ids : [];
    for (const gone of [v1, v4]) expect(ids).not.toContain(gone.adapterName);
    for (const kept of [v2, v3, v5, v6]) expect(ids).toContain(kept.adapterName);
    expect(report.pruned.sort()).toEqual(
      [v1, v4].map((version) => join(servingDir, version.adapterName)).sort(),
    );
    for (const kept of [v2, v3, v5, v6]) {
      expect(existsSync(join(servingDir, kept.adapterName, 'adapter_config.json'))).toBe(true);
    }
    const rows = await store.listPublications({ policyId: policy.id });
    expect(rows.map((row) => row.adapterName).sort()).toEqual(
      [v2, v3, v5, v6].map((version) => version.adapterName).sort(),
    );
    // Catch-up leaves them unloaded (they are not routable), and keeps the others ready.
    const caught = await catchUpFleet({ store, fleet: fleetOf([url(healthy)], 2), policyName: policy.name });
    expect(caught[0]?.loaded).toEqual([]);
    expect(caught[0]?.failed).toEqual([]);
    const after = await replicaModels({ endpoint: { baseUrl: url(healthy), timeoutMs: 30_000 } });
    expect(after.ok && after.ids.filter((id) => id.startsWith(`${policy.name}@`)).sort()).toEqual(
      [v2, v3, v5, v6].map((version) => version.adapterName).sort(),
    );
  }, 180_000);
});
