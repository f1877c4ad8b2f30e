// The one tool list RULER shows the judge for a group, from the lists stored with its trajectories
// (trajectories.tools). Pure; how a trajectory's own render uses its list is the trainer's business.
import type { ToolSpec } from '../../protocol/chat.ts';

export interface StoredGroupTools {
  /** Every tool any trajectory stored, once per name, in the order first seen; absent when none stored a list. */
  readonly tools?: ToolSpec[];
  /** Trajectories with no stored list (written before edgerl stored tools). */
  readonly missing: number;
}

/**
 * Trajectories of a rollout share one list (the environment's); proxy-recorded ones may differ, so
 * the judge is shown their union by name (the first definition of a name wins).
 */
export function storedGroupTools(
  trajectories: readonly { readonly tools: readonly ToolSpec[] | null }[],
): StoredGroupTools {
  const byName = new Map<string, ToolSpec>();
  let stored = 0;
  for (const trajectory of trajectories) {
    if (trajectory.tools === null) continue;
    stored += 1;
    for (const tool of trajectory.tools) {
      if (!byName.has(tool.function.name)) byName.set(tool.function.name, tool);
    }
  }
  const missing = trajectories.length - stored;
  return stored > 0 ? { tools: [...byName.values()], missing } : { missing };
}
