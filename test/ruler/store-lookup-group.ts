// Fixture helper: writes the first `count` lookup-group trajectories (lookup-group.ts) into a store as
// one group of the `multi-hop` environment, through the store's own API, and finishes them (the first
// with verifier reward 1, the others 0; the last one as an infrastructure error when asked), with the
// tool list given stored on each trajectory.
import type { Store } from '../../db/store.ts';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { lookupGroup } from './lookup-group.ts';

export interface StoredLookupGroup {
  readonly groupId: string;
  /** Store ids of the trajectories, in fixture order. */
  readonly ids: string[];
}

export async function storeLookupGroup(
  store: Store,
  key: string,
  count: number,
  options: { lastErrors?: boolean; finish?: boolean; tools?: ToolSpec[] } = {},
): Promise<StoredLookupGroup> {
  const task = await store.upsertTask({ env: 'multi-hop', key, input: { question: 'q' } });
  const group = await store.createGroup({ taskId: task.id, size: count });
  const ids: string[] = [];
  for (const [index, trajectory] of lookupGroup().slice(0, count).entries()) {
    const row = await store.startTrajectory({
      groupId: group.id,
      ...(options.tools ? { tools: options.tools } : {}),
    });
    ids.push(row.id);
    for (const [turnIndex, message] of trajectory.messages.entries()) {
      await store.appendTurn({ trajectoryId: row.id, index: turnIndex, ...turnFields(message) });
    }
    if (options.finish === false) continue;
    const errored = options.lastErrors === true && index === count - 1;
    await store.finishTrajectory(
      errored
        ? { trajectoryId: row.id, status: 'error', errorReason: 'policy endpoint down' }
        : { trajectoryId: row.id, status: 'finished', verifierReward: index === 0 ? 1 : 0 },
    );
  }
  return { groupId: group.id, ids };
}

function turnFields(message: ChatMessage) {
  switch (message.role) {
    case 'assistant':
      return {
        role: 'assistant' as const,
        content: message.content,
        ...(message.tool_calls ? { toolCalls: message.tool_calls } : {}),
      };
    case 'tool':
      return { role: 'tool' as const, content: message.content, toolCallId: message.tool_call_id };
    default:
      return { role: message.role, content: message.content };
  }
}
