// Services an environment's tools and verifier may need beyond the task itself, injected by
// whoever runs the episode (a route, the CLI, a test). Closed list: add a capability here.
import type { ReadOnlySql } from '../../protocol/read-only-sql.ts';

export interface Capabilities {
  /** Read-only queries against the sample shop in the SQL sandbox (the SQL environment). */
  readonly sql?: ReadOnlySql;
}

export const capabilityNames = ['sql'] as const satisfies readonly (keyof Capabilities)[];
export type CapabilityName = (typeof capabilityNames)[number];

/** The names in `required` that `capabilities` does not provide. */
export function missingCapabilities(
  required: readonly CapabilityName[],
  capabilities: Partial<Record<CapabilityName, unknown>>,
): CapabilityName[] {
  return required.filter((name) => capabilities[name] === undefined);
}
