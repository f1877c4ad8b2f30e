// The trainer renders each trajectory with the tools stored with it, not with what an environment's
// current code offers: a group stored with a tool list that differs from its environment's, and a
// group recorded through the edge's proxy from requests that carried `tools`. Rows stored without a
// list are rendered without tools and counted.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environments } from '../../edge/environments/environments.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { renderForTraining } from '../../model/tokenizer/render-for-training.ts';
import type { ToolSpec } from '../../protocol/chat.ts';
import type { StoredMessage } from '../../trainer/train/build-batch.ts';
import { LeaseKeeper } from '../../trainer/train/lease-keeper.ts';
import { type PreparedStep, prepareStep } from '../../trainer/train/prepare-step.ts';
import { storedMessages } from '../../trainer/train/stored-messages.ts';
import type { Progress } from '../../trainer/train/progress.ts';
import { resolveTrainConfig } from '../../trainer/train/train-config.ts';
import { Trainer } from '../../trainer/train/trainer.ts';
import { type EdgeHarness, startEdgeHarness } from '../edge/support/edge-harness.ts';
import { uniqueName } from '../support/fixtures.ts';
import { seedGroup, seedPolicy } from './support/seed-groups.ts';
import { useTrainerRig } from './support/trainer-rig.ts';
import { trajectoryKeyDigest } from '../../protocol/trajectory-key.ts';

let root: string;
let modelDir: string;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;
let h: EdgeHarness;

const rig = useTrainerRig('edgerl-stored-tools-', { store: false });

beforeAll(async () => {
  ({ root, modelDir, sampler, tokenizer } = rig);
  h = await startEdgeHarness();
});

afterAll(async () => {
  await h?.close();
});

/** A tool list that is not multi-hop's (its code offers `lookup`). */
const storedSpecs: ToolSpec[] = [
  {
    type: 'function',
    function: {
      name: 'archive_search',
      description: 'Search the archive by keyword.',
      parameters: { type: 'object', properties: { keyword: { type: 'string' } }, required: ['keyword'] },
    },
  },
];

/** Claims and prepares one step for `policyName`, keeping the progress lines. */
async function prepare(policyName: string): Promise<{ prepared: PreparedStep | undefined; lines: string[] }> {
  const lines: string[] = [];
  const progress: Progress = { line: (text) => lines.push(text), microBatch() {}, stepEnd() {} };
  const config = resolveTrainConfig({
    policyName,
    modelDir,
    outputDir: join(root, `out-${policyName}`),
    inference: { baseUrl: 'http://127.0.0.1:9/v1', timeoutMs: 1_000 },
    owner: `test:${policyName}`,
    reward: 'verifier',
    groupsPerStep: 2,
    lora: { r: 2, alpha: 4, targets: ['q_proj'] },
  });
  const session = await Trainer.open(config, { store: h.store, progress });
  const keeper = new LeaseKeeper({ renew: async () => {}, leaseSeconds: config.leaseSeconds });
  try {
    return { prepared: await prepareStep(session.session, keeper, session.position.lineage), lines };
  } finally {
    await session.close();
  }
}

/** The training render of stored messages (sampled ids spliced in) with a given tool list. */
function renderIds(messages: readonly StoredMessage[], tools: readonly ToolSpec[] | undefined): number[] {
  return renderForTraining(tokenizer, {
    messages: messages.map((message) => {
      if (message.role !== 'assistant') return message;
      const { completionLogprobs: _logprobs, ...rest } = message;
      return rest;
    }),
    ...(tools ? { tools } : {}),
    trainOnUnsampled: true,
  }).ids;
}

async function sequenceIdsOf(prepared: PreparedStep | undefined, trajectoryId: string) {
  const sequence = prepared?.batch.sequences.find((candidate) => candidate.trajectoryId === trajectoryId);
  if (!sequence) throw new Error(`no sequence for ${trajectoryId}`);
  const { trajectory, turns } = await h.store.getTrajectory(trajectoryId);
  return { ids: sequence.ids, messages: storedMessages({ ...trajectory, turns }) };
}

describe('the training render uses the stored tool specs', () => {
  it('renders a group with its stored list even though its environment now offers other tools', async () => {
    const name = uniqueName('stored-tools');
    const { base } = await seedPolicy(h.store, name);
    const seeded = await seedGroup(h.store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [1, 0],
      seed: 5,
      env: 'multi-hop',
      tools: storedSpecs,
    });
    const environmentSpecs = environments['multi-hop']?.tools.map((tool) => tool.spec);
    expect(environmentSpecs?.map((spec) => spec.function.name)).toEqual(['lookup']);

    const { prepared, lines } = await prepare(name);
    expect(prepared?.used).toEqual([seeded.groupId]);
    for (const trajectoryId of seeded.trajectoryIds) {
      const { ids, messages } = await sequenceIdsOf(prepared, trajectoryId);
      expect(ids).toEqual(renderIds(messages, storedSpecs));
      // The difference is visible in the tokens: rendering with the environment's tools would not match.
      expect(ids).not.toEqual(renderIds(messages, environmentSpecs));
    }
    expect(lines.some((line) => line.includes('no stored tool list'))).toBe(false);
  });

  it('trains a proxy-recorded group with the tools its requests carried', async () => {
    const name = uniqueName('proxy-tools');
    const { base } = await seedPolicy(h.store, name);
    const task = await h.store.upsertTask({ env: 'my-agent', key: uniqueName('task'), input: {} });
    const group = await h.store.createGroup({ taskId: task.id, size: 2, policyVersionId: base.id });
    const requestTools = [
      {
        type: 'function',
        // `strict` is forwarded upstream but not part of the stored spec.
        function: { ...storedSpecs[0]?.function, strict: true },
      },
    ];
    const ids: string[] = [];
    for (const reward of [1, 0]) {
      const started = await h.api('/v1/trajectories', { json: { groupId: group.id } });
      expect(started.status).toBe(201);
      const { trajectory, key } = (await started.json()) as {
        trajectory: { id: string; tools: unknown };
        key: string;
      };
      expect(trajectory.tools).toBeNull();
      const reply = await h.api('/v1/chat/completions', {
        json: {
          model: base.adapterName,
          tools: requestTools,
          messages: [
            { role: 'system', content: 'You follow keys.' },
            { role: 'user', content: `Find the value of key a${reward}.` },
          ],
        },
        headers: { 'x-edgerl-trajectory': key },
      });
      expect(reply.status).toBe(200);
      await h.store.finishTrajectory({
        trajectoryId: trajectory.id,
        status: 'finished',
        verifierReward: reward,
        keyDigest: trajectoryKeyDigest(key),
      });
      ids.push(trajectory.id);
    }
    const stored = await h.store.getTrajectory(ids[0] as string);
    expect(stored.trajectory.tools).toEqual(storedSpecs);

    const { prepared } = await prepare(name);
    expect(prepared?.used).toEqual([group.id]);
    for (const trajectoryId of ids) {
      const { ids: sequenceIds, messages } = await sequenceIdsOf(prepared, trajectoryId);
      expect(sequenceIds).toEqual(renderIds(messages, storedSpecs));
      expect(sequenceIds).not.toEqual(renderIds(messages, undefined));
    }
  });

  it('renders rows stored before tools were stored without tools, and says how many', async () => {
    const name = uniqueName('no-tools');
    const { base } = await seedPolicy(h.store, name);
    const seeded = await seedGroup(h.store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [1, 0],
      seed: 6,
      env: 'multi-hop',
    });
    const { prepared, lines } = await prepare(name);
    for (const trajectoryId of seeded.trajectoryIds) {
      const { ids, messages } = await sequenceIdsOf(prepared, trajectoryId);
      expect(ids).toEqual(renderIds(messages, undefined));
    }
    expect(lines).toContain(
      '2 trajectory(ies) have no stored tool list (recorded before edgerl stored tools): rendered without tools',
    );
  });
});
