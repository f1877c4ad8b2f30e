// The commit rule of fleet publication, in process: a fleet of the local inference endpoint and a
// replica that refuses connections. With --min-replicas 2 the version is not committed (one
// acknowledged of two required): it stays `training`, the previous default keeps serving, the rows say
// why; with the default of 1 the next run commits it with the replica that verified it, and the
// unreachable one stays quarantined for it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { silentProgress } from '../../trainer/train/progress.ts';
import { resolveTrainConfig } from '../../trainer/train/train-config.ts';
import { runCycle, Trainer } from '../../trainer/train/trainer.ts';
import { seedGroup, seedPolicy } from './support/seed-groups.ts';
import { useTrainerRig } from './support/trainer-rig.ts';

let root: string;
let modelDir: string;
let store: Store;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;
/** Nothing listens on the discard port: connections are refused. */
const dead = 'http://127.0.0.1:9/v1';

const rig = useTrainerRig('edgerl-fleet-train-');

beforeAll(async () => {
  ({ root, modelDir, sampler, tokenizer, store } = rig);
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
});
afterAll(async () => {
  await serving?.close();
});

function config(minReplicas?: number) {
  return resolveTrainConfig({
    policyName: 'fleet-agent',
    modelDir,
    outputDir: join(root, 'out'),
    inference: {
      baseUrl: [`${serving.url}/v1`, dead],
      timeoutMs: 30_000,
      ...(minReplicas ? { minReplicas } : {}),
    },
    owner: 'test:fleet',
    reward: 'verifier',
    groupsPerStep: 4,
    loss: { learningRate: 5e-3, weightDecay: 0 },
    lora: { r: 4, alpha: 8, targets: ['q_proj', 'v_proj'] },
  });
}

async function rows() {
  return (await store.listPublications({})).map((row) => [row.adapterName, row.replica, row.state]);
}

describe('fleet publication: how many replicas must acknowledge', () => {
  it('does not commit below --min-replicas, and commits on the one that verified with the default of 1', async () => {
    const { policy, base } = await seedPolicy(store, 'fleet-agent');
    const seeded = await seedGroup(store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [1, 0, 0, 1],
      seed: 5,
    });
    const live = `${serving.url}/v1`;

    const strict = await Trainer.open(config(2), { store, progress: silentProgress });
    try {
      const report = await runCycle(strict);
      expect(report).toMatchObject({ kind: 'publish-failed', adapterName: 'fleet-agent@1', stage: 'list' });
      if (report.kind === 'publish-failed') {
        expect(report.reason).toMatch(
          new RegExp(
            `^1 of 2 required replica\\(s\\) acknowledged it; ${dead.replaceAll('.', '\\.')}: GET /models`,
          ),
        );
      }
    } finally {
      await strict.close();
    }
    expect(await rows()).toEqual(
      [
        ['fleet-agent@1', dead, 'quarantined'],
        ['fleet-agent@1', live, 'verified'],
      ].sort((x, y) => String(x[1]).localeCompare(String(y[1]))),
    );
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.id).toBe(base.id);
    expect((await store.getGroup({ groupId: seeded.groupId })).group.status).toBe('complete');

    const lenient = await Trainer.open(config(), { store, progress: silentProgress });
    try {
      const report = await runCycle(lenient);
      expect(report).toMatchObject({
        kind: 'published',
        adapterName: 'fleet-agent@1',
        resumed: true,
        replicas: [live],
      });
    } finally {
      await lenient.close();
    }
    const after = await store.listPublications({});
    expect(after.map((row) => [row.replica, row.state, row.attempts])).toEqual(
      [
        [dead, 'quarantined', 2],
        [live, 'ready', 2],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.adapterName).toBe('fleet-agent@1');
    expect((await store.getGroup({ groupId: seeded.groupId })).group.status).toBe('trained');
  });
});
