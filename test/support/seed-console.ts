// A store seeded with what the console shows, through the Store's own functions (no SQL): a policy
// with three versions (the last published on a two-replica fleet, one replica quarantined), two
// training runs (one numbered 801–814, the case the old demo chart drew wrong), scored groups with
// tool calls, tool errors, judge explanations and sampling logprobs, a running group, and an A/B
// experiment between two versions on eval tasks. Deterministic content; ids are the store's.
import type { TurnInput } from '../../protocol/turn.ts';
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { Store } from '../../db/store.ts';

export interface ConsoleSeed {
  readonly policyName: string;
  readonly versions: readonly PolicyVersion[];
  /** Run 1 (steps 801–814) then run 2 (steps 0–5). */
  readonly runs: readonly { readonly id: string; readonly steps: readonly number[] }[];
  /** Scored groups with their trajectory count. */
  readonly groups: readonly { readonly id: string; readonly size: number }[];
  /** A group still running: its trajectories have a user turn each and no answer yet. */
  readonly runningGroup: { readonly id: string; readonly trajectoryIds: readonly string[] };
  /** A trajectory whose answer holds `<script>` markup (model output is untrusted). */
  readonly hostileTrajectoryId: string;
  readonly experimentName: string;
  /** The experiment's arms: control agent@1, candidate agent@2. */
  readonly arms: readonly { readonly name: string; readonly versionId: string }[];
  readonly replicas: readonly string[];
}

/** The markup the hostile trajectory's answer holds; a page must show it as text. */
export const hostileAnswer =
  '<script>window.__pwned = true</script><img src=x onerror="window.__pwned=true">';

/** A small deterministic generator (a 32-bit LCG, Numerical Recipes' constants). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'lookup',
      description: 'Look a key up in the directory',
      parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
    },
  },
];

export async function seedConsoleStore(
  store: Store,
  options: { readonly policyName?: string } = {},
): Promise<ConsoleSeed> {
  const random = lcg(21);
  const policyName = options.policyName ?? 'agent';
  const replicas = ['http://10.0.0.7:8000/v1', 'http://10.0.0.8:8000/v1'];
  const policy = await store.createPolicy({ name: policyName, baseModel: 'tiny-base' });
  const v0 = await store.registerPolicyVersion({ policyId: policy.id });
  await store.publishPolicyVersion({ versionId: v0.id, makeDefault: true });

  const groups: { id: string; size: number }[] = [];
  let hostileTrajectoryId = '';
  const makeScoredGroup = async (version: PolicyVersion, key: string, rewards: readonly number[]) => {
    const task = await store.upsertTask({
      env: 'multi-hop',
      key,
      input: { question: `Where does ${key} live?` },
    });
    const group = await store.createGroup({
      taskId: task.id,
      size: rewards.length,
      policyVersionId: version.id,
    });
    const ids: string[] = [];
    for (const [slot, reward] of rewards.entries()) {
      const trajectory = await store.startTrajectory({ groupId: group.id, tools });
      ids.push(trajectory.id);
      const hostile = groups.length === 0 && slot === 0;
      if (hostile) hostileTrajectoryId = trajectory.id;
      const answer = hostile
        ? hostileAnswer
        : reward === 1
          ? `${key} lives in Lisbon.`
          : `${key} lives in Oslo?`;
      await store.appendTurns(episodeTurns(trajectory.id, key, answer, version.adapterName, slot, random));
      await store.finishTrajectory({
        trajectoryId: trajectory.id,
        status: slot === rewards.length - 1 && reward === 0 ? 'truncated' : 'finished',
        verifierReward: reward,
        ...(slot === 1 ? { metadata: { training: { driftTurns: 1, driftTokens: 3 } } } : {}),
      });
    }
    await store.recordJudgeScores({
      groupId: group.id,
      judgeModel: 'judge-double',
      rubricHash: 'rubric-1',
      scores: ids.map((trajectoryId, slot) => ({
        trajectoryId,
        score: Number((0.2 + 0.6 * (rewards[slot] ?? 0) + 0.1 * random()).toFixed(3)),
        explanation: rewards[slot]
          ? 'Followed the chain of lookups to the right city.'
          : 'Stopped one hop early & guessed.',
      })),
    });
    await store.setFinalRewards({
      rewards: ids.map((trajectoryId, slot) => ({
        trajectoryId,
        finalReward: Number((0.8 * (rewards[slot] ?? 0) + 0.2 * random()).toFixed(3)),
      })),
    });
    groups.push({ id: group.id, size: rewards.length });
    return group.id;
  };

  const early = [
    await makeScoredGroup(v0, 'ada', [1, 0, 0, 1]),
    await makeScoredGroup(v0, 'brian', [0, 0, 1, 0]),
    await makeScoredGroup(v0, 'chen', [1, 1, 0, 0]),
  ];

  // Run 1: from v0, steps 801–814 (a resumed run keeps numbering), producing v1.
  const run1 = await store.startTrainingRun({
    policyId: policy.id,
    baseVersionId: v0.id,
    config: { loss: { scaleRewards: 'group' } },
  });
  const run1Steps = Array.from({ length: 14 }, (_, index) => 801 + index);
  for (const [index, step] of run1Steps.entries()) {
    await store.recordTrainingStep({
      trainingRunId: run1.id,
      step,
      metrics: stepMetrics(index, random),
      groupIds: early,
    });
  }
  const v1 = await store.registerPolicyVersion({
    policyId: policy.id,
    parentVersionId: v0.id,
    trainingRunId: run1.id,
  });
  await store.publishPolicyVersion({ versionId: v1.id });
  await store.finishTrainingRun({ trainingRunId: run1.id, status: 'finished' });

  const later = [
    await makeScoredGroup(v1, 'dana', [1, 1, 0, 1]),
    await makeScoredGroup(v1, 'emil', [0, 1, 1, 1]),
  ];

  // Run 2: from v1, steps 0–5, on a new group and an old one (staleness 1), producing v2 on the fleet.
  const run2 = await store.startTrainingRun({
    policyId: policy.id,
    baseVersionId: v1.id,
    config: { loss: { scaleRewards: 'none' } },
  });
  const run2Steps = [0, 1, 2, 3, 4, 5];
  for (const step of run2Steps) {
    await store.recordTrainingStep({
      trainingRunId: run2.id,
      step,
      metrics: stepMetrics(step + 8, random),
      groupIds: [...later, early[0] as string],
    });
  }
  const v2 = await store.registerPolicyVersion({
    policyId: policy.id,
    parentVersionId: v1.id,
    trainingRunId: run2.id,
  });
  await store.publishPolicyVersion({ versionId: v2.id });
  await store.recordPublication({ versionId: v2.id, replica: replicas[0] as string, state: 'ready' });
  await store.recordPublication({
    versionId: v2.id,
    replica: replicas[1] as string,
    state: 'quarantined',
    attempt: true,
    error: 'verify: the probe through agent@2 timed out',
  });
  await store.finishTrainingRun({ trainingRunId: run2.id, status: 'finished' });

  // A group still running: one user turn per trajectory, nothing answered yet.
  const runningTask = await store.upsertTask({
    env: 'multi-hop',
    key: 'farah',
    input: { question: 'Where does farah live?' },
  });
  const running = await store.createGroup({ taskId: runningTask.id, size: 3, policyVersionId: v2.id });
  const runningIds: string[] = [];
  for (let slot = 0; slot < 3; slot += 1) {
    const trajectory = await store.startTrajectory({ groupId: running.id, tools });
    runningIds.push(trajectory.id);
    await store.appendTurns([
      { trajectoryId: trajectory.id, index: 0, role: 'system', content: 'Answer with the city.' },
      { trajectoryId: trajectory.id, index: 1, role: 'user', content: 'Where does farah live?' },
    ]);
  }

  // An A/B experiment between v1 and v2 on eval tasks, ten per arm, binary rewards.
  // Experiment names are unique store-wide: a second seed in a shared database names its own.
  const experimentName = policyName === 'agent' ? 'v1-vs-v2' : `${policyName}-v1-vs-v2`;
  const experiment = await store.createExperiment({
    name: experimentName,
    minSamples: 10,
    arms: [{ policyVersionId: v1.id }, { policyVersionId: v2.id }],
  });
  const arms = experiment.arms.map((arm) => ({ name: arm.name, versionId: arm.policyVersionId, id: arm.id }));
  for (let index = 0; index < 10; index += 1) {
    const task = await store.upsertTask({
      env: 'multi-hop',
      key: `eval-${index}`,
      split: 'eval',
      input: { question: `Where does eval-${index} live?` },
    });
    for (const [position, arm] of arms.entries()) {
      const version = position === 0 ? v1 : v2;
      const trajectory = await store.startTrajectory({
        taskId: task.id,
        policyVersionId: arm.versionId,
        experimentArmId: arm.id,
      });
      // The candidate answers 8 of 10, the control 4 of 10.
      const reward = position === 0 ? (index % 5 < 2 ? 1 : 0) : index < 8 ? 1 : 0;
      await store.appendTurns([
        { trajectoryId: trajectory.id, index: 0, role: 'user', content: `Where does eval-${index} live?` },
        assistant(
          trajectory.id,
          1,
          reward ? `eval-${index} lives in Lisbon.` : `eval-${index} lives in Oslo.`,
          version.adapterName,
          random,
        ),
      ]);
      await store.finishTrajectory({
        trajectoryId: trajectory.id,
        status: 'finished',
        verifierReward: reward,
      });
    }
  }

  return {
    policyName,
    versions: [v0, v1, v2],
    runs: [
      { id: run1.id, steps: run1Steps },
      { id: run2.id, steps: run2Steps },
    ],
    groups,
    runningGroup: { id: running.id, trajectoryIds: runningIds },
    hostileTrajectoryId,
    experimentName,
    arms: arms.map(({ name, versionId }) => ({ name, versionId })),
    replicas,
  };
}

/** A rising reward with noise, a falling loss and the other step metrics the console charts. */
function stepMetrics(index: number, random: () => number): Record<string, number> {
  const reward = Math.min(1, 0.25 + 0.04 * index + 0.1 * random());
  return {
    loss: Number((0.9 - 0.03 * index + 0.05 * random()).toFixed(4)),
    'reward/mean': Number(reward.toFixed(4)),
    'reward/std': Number((0.3 + 0.1 * random()).toFixed(4)),
    'kl/mean': Number((0.001 * index + 0.0005 * random()).toFixed(5)),
    'clip/fraction': Number((0.02 + 0.03 * random()).toFixed(4)),
    'grad/norm': Number((0.5 + random()).toFixed(4)),
    'tokens/per_second': Math.round(900 + 300 * random()),
  };
}

function assistant(
  trajectoryId: string,
  index: number,
  content: string,
  servedBy: string,
  random: () => number,
): TurnInput {
  const tokens = Math.max(3, Math.ceil(content.length / 4));
  return {
    trajectoryId,
    index,
    role: 'assistant',
    content,
    completionTokenIds: Array.from({ length: tokens }, (_, token) => 100 + ((index * 7 + token * 13) % 400)),
    completionLogprobs: Array.from({ length: tokens }, () => Number((-3 * random() ** 3).toFixed(4))),
    promptTokenCount: 40 + index * 12,
    servedBy,
    latencyMs: Math.round(80 + 200 * random()),
    metadata: { finishReason: 'stop', tokenExact: true, recordedBy: 'episode' },
  };
}

/** system, user, a tool call, its result, a bad call answered by a tool error, then the answer. */
function episodeTurns(
  trajectoryId: string,
  key: string,
  answer: string,
  servedBy: string,
  slot: number,
  random: () => number,
): TurnInput[] {
  const call = (id: string, args: string) => ({
    id,
    type: 'function' as const,
    function: { name: 'lookup', arguments: args },
  });
  return [
    {
      trajectoryId,
      index: 0,
      role: 'system',
      content: 'Use lookup until you know the city; answer with it.',
    },
    { trajectoryId, index: 1, role: 'user', content: `Where does ${key} live?` },
    {
      ...assistant(trajectoryId, 2, '', servedBy, random),
      content: null,
      toolCalls: [call(`call-${slot}-a`, JSON.stringify({ key }))],
    },
    {
      trajectoryId,
      index: 3,
      role: 'tool',
      toolCallId: `call-${slot}-a`,
      content: `${key} → office ${slot + 3}`,
      metadata: { toolName: 'lookup' },
    },
    {
      ...assistant(trajectoryId, 4, '', servedBy, random),
      content: null,
      toolCalls: [call(`call-${slot}-b`, '{"key": office')],
    },
    {
      trajectoryId,
      index: 5,
      role: 'tool',
      toolCallId: `call-${slot}-b`,
      toolError: 'malformed-call',
      content: 'error: the arguments were not a JSON object',
      metadata: { toolName: 'lookup' },
    },
    assistant(trajectoryId, 6, answer, servedBy, random),
  ];
}
