// One stored trajectory as the trainer's input to buildBatch: its turns as messages (sampled ids and
// logprobs kept), the tools it was offered, and the advantage every trained token gets. SFT and replay
// (sft.ts, replay.ts) read trajectories this way; GRPO gets its own from the scored group.
import type { Store } from '../../db/store.ts';
import type { TrajectoryInput } from './build-batch.ts';
import { storedMessages } from './stored-messages.ts';
import { storedTools } from './stored-tools.ts';

export async function storedTrajectoryInput(
  store: Store,
  trajectoryId: string,
  advantage: number,
): Promise<TrajectoryInput> {
  const { trajectory, turns } = await store.getTrajectory(trajectoryId);
  return {
    trajectoryId: trajectory.id,
    groupId: trajectory.groupId,
    messages: storedMessages({ ...trajectory, turns }),
    ...storedTools(trajectory),
    advantage,
  };
}
