// One lineage per policy, in process on the embedded store: while one session holds a policy's lease
// another on the same policy cannot open (one on another policy can), and a trainer whose checkpoint
// no longer descends from the default (another trainer published meanwhile) starts from the default,
// so the published versions stay one chain.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import { loadModel, type PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { loadTokenizer } from '../../model/tokenizer/load-tokenizer.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { silentProgress } from '../../trainer/train/progress.ts';
import { runCycle } from '../../trainer/train/run-cycle.ts';
import { resolveTrainConfig } from '../../trainer/train/train-config.ts';
import { PolicyLeasedError, TrainerSession } from '../../trainer/train/trainer-session.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';
import { seedGroup, seedPolicy } from './support/seed-groups.ts';
import { useWasm, writeTinyModelDir } from './support/tiny-policy.ts';

let root: string;
let modelDir: string;
let testStore: TestStore;
let store: Store;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;

beforeAll(async () => {
  await useWasm();
  root = await mkdtemp(join(tmpdir(), 'edgerl-lineage-'));
  modelDir = join(root, 'model');
  await writeTinyModelDir(modelDir);
  [sampler, tokenizer] = await Promise.all([loadModel(modelDir), loadTokenizer(modelDir)]);
  testStore = await openTestStore();
  store = testStore.store;
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
});

afterAll(async () => {
  await serving?.close();
  sampler?.dispose();
  await testStore?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

function config(policyName: string, trainer: string) {
  return resolveTrainConfig({
    policyName,
    modelDir,
    outputDir: join(root, `out-${policyName}-${trainer}`),
    inference: { baseUrl: `${serving.url}/v1`, timeoutMs: 30_000 },
    owner: `test:${trainer}`,
    reward: 'verifier',
    loss: { learningRate: 5e-3, weightDecay: 0 },
    lora: { r: 4, alpha: 8, targets: ['q_proj', 'v_proj'] },
  });
}

async function trainOnce(policyName: string, trainer: string, lines: string[] = []) {
  const progress = { line: (text: string) => lines.push(text), microBatch: () => {}, stepEnd: () => {} };
  const session = await TrainerSession.open(config(policyName, trainer), { store, progress });
  try {
    return await runCycle(session);
  } finally {
    await session.close();
  }
}

describe('one lineage per policy', () => {
  it('refuses a second session on a leased policy, not on another policy', async () => {
    await seedPolicy(store, 'lease-a');
    await seedPolicy(store, 'lease-b');
    const holder = await TrainerSession.open(config('lease-a', 'one'), { store, progress: silentProgress });
    try {
      const refused = await TrainerSession.open(config('lease-a', 'two'), {
        store,
        progress: silentProgress,
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(PolicyLeasedError);
      expect(String((refused as Error).message)).toContain('is being trained by test:one');
      const other = await TrainerSession.open(config('lease-b', 'two'), { store, progress: silentProgress });
      await other.close();
    } finally {
      await holder.close();
    }
    // Closed, the lease is free again.
    const next = await TrainerSession.open(config('lease-a', 'two'), { store, progress: silentProgress });
    await next.close();
  });

  it('a trainer whose checkpoint is behind the default continues from the default', async () => {
    const { base } = await seedPolicy(store, 'chain');
    const seed = async (n: number) =>
      (await seedGroup(store, sampler, tokenizer, { versionId: base.id, rewards: [1, 0, 0, 1], seed: n }))
        .groupId;
    const first = await seed(1);
    expect(await trainOnce('chain', 'x')).toMatchObject({ kind: 'published', adapterName: 'chain@1' });
    const second = await seed(2);
    expect(await trainOnce('chain', 'y')).toMatchObject({ kind: 'published', adapterName: 'chain@2' });
    const third = await seed(3);
    const lines: string[] = [];
    // x's checkpoint holds chain@1; the default is chain@2 (y's).
    expect(await trainOnce('chain', 'x', lines)).toMatchObject({ kind: 'published', adapterName: 'chain@3' });
    expect(lines.join('\n')).toContain('not chain@2 (the default); starting from the default');
    const versions = (
      await store.sql.query(
        `select v.id, v.parent_version_id, v.metadata->'groupIds' from policy_versions v
         join policies p on p.id = v.policy_id where p.name = 'chain' order by v.version`,
        [],
      )
    ).rows;
    for (const [index, version] of versions.entries()) {
      if (index > 0) expect(version[1]).toBe(versions[index - 1]?.[0]);
    }
    expect(versions.slice(1).map((version) => version[2])).toEqual([[first], [second], [third]]);
    expect((await store.getDefaultVersion({ policyName: 'chain' }))?.id).toBe(versions.at(-1)?.[0]);
  });
});
