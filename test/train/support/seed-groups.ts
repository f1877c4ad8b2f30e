// Seeds rollout groups for trainer tests straight into the store, with assistant turns sampled from the
// tiny model itself (real completion token ids and logprobs), so the tests need no edge. Test-only.
import type { TaskSplit } from '../../../protocol/statuses.ts';
import type { Store } from '../../../db/store.ts';
import type { ChatMessage, ToolSpec } from '../../../protocol/chat.ts';
import type { PolicyModel } from '../../../model/policy-model.ts';
import type { ChatTokenizer } from '../../../model/tokenizer/chat-tokenizer.ts';
import { uniqueName } from '../../support/fixtures.ts';
import { sampleTurn } from './tiny-policy.ts';

export interface SeededGroup {
  readonly groupId: string;
  readonly trajectoryIds: string[];
  /** Sampled completion ids per trajectory (one assistant turn each). */
  readonly completions: number[][];
  /** The prompt messages every trajectory of the group starts with. */
  readonly prompt: ChatMessage[];
}

export async function seedPolicy(store: Store, name = uniqueName('agent')) {
  const policy = await store.createPolicy({ name, baseModel: 'tiny' });
  const base = await store.registerPolicyVersion({ policyId: policy.id });
  await store.publishPolicyVersion({ versionId: base.id, makeDefault: true });
  return { policy, base };
}

/**
 * One complete group of `rewards.length` trajectories (system, user, one sampled assistant turn), each
 * finished with its verifier reward, served by `versionId`.
 */
export async function seedGroup(
  store: Store,
  model: PolicyModel,
  tokenizer: ChatTokenizer,
  options: {
    versionId: string;
    rewards: readonly number[];
    seed: number;
    env?: string;
    question?: string;
    /** Stored with each trajectory and offered to the model when sampling its turn. */
    tools?: ToolSpec[];
    /** The task's split (default the store's: train). */
    split?: TaskSplit;
    /**
     * Added to every stored sampling logprob: a sampler that found each token e^offset times as
     * likely as this model does (an older version, or another engine's numerics).
     */
    logprobOffset?: number;
  },
): Promise<SeededGroup> {
  const task = await store.upsertTask({
    env: options.env ?? 'tiny-test',
    key: uniqueName('task'),
    input: { seed: options.seed },
    ...(options.split ? { split: options.split } : {}),
  });
  const group = await store.createGroup({
    taskId: task.id,
    size: options.rewards.length,
    policyVersionId: options.versionId,
  });
  const prompt: ChatMessage[] = [
    { role: 'system', content: 'Answer in one word.' },
    { role: 'user', content: options.question ?? `What is ${options.seed} + 1?` },
  ];
  const trajectoryIds: string[] = [];
  const completions: number[][] = [];
  for (const [slot, reward] of options.rewards.entries()) {
    const trajectory = await store.startTrajectory({
      groupId: group.id,
      ...(options.tools ? { tools: options.tools } : {}),
    });
    trajectoryIds.push(trajectory.id);
    const turn = await sampleTurn(model, tokenizer, prompt, {
      seed: options.seed * 100 + slot,
      ...(options.tools ? { tools: options.tools } : {}),
    });
    completions.push(turn.completionTokenIds);
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
      completionLogprobs: turn.completionLogprobs.map((logprob) => logprob + (options.logprobOffset ?? 0)),
      servedBy: 'tiny',
    });
    await store.finishTrajectory({ trajectoryId: trajectory.id, status: 'finished', verifierReward: reward });
  }
  return { groupId: group.id, trajectoryIds, completions, prompt };
}
