// The environments edgerl ships, by name: what routes, the CLI and the demo look environments up in.
import type { Environment } from './environment.ts';
import { multiHop } from './multi-hop.ts';
import { sqlAgent } from './sql-agent/sql-agent.ts';

export const environments = {
  [multiHop.name]: multiHop,
  [sqlAgent.name]: sqlAgent,
} satisfies Record<string, Environment>;

export const environmentNames: readonly string[] = Object.keys(environments);

/** The environment of that name; throws naming the ones there are. */
export function getEnvironment(name: string): Environment {
  const environment = Object.hasOwn(environments, name) ? environments[name] : undefined;
  if (!environment) throw new Error(`unknown environment "${name}"; known: ${environmentNames.join(', ')}`);
  return environment;
}
