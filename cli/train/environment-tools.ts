// The tool specs of an environment by name, for rendering stored trajectories whose tools the trainer
// needs to know; undefined for an environment this build does not have.
import { getEnvironment } from '../../edge/environments/environments.ts';
import type { ToolSpec } from '../../protocol/chat.ts';

export function environmentTools(name: string): readonly ToolSpec[] | undefined {
  try {
    return getEnvironment(name).tools.map((tool) => tool.spec);
  } catch {
    return undefined;
  }
}
