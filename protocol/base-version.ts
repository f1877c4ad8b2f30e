// Which policy version stands for the base weights: version 0 with no adapter files and no training
// run. Every inference replica serves it (under the base model's name), so it needs no adapter loaded
// anywhere: the router sends it to any replica, and the fleet rules (a default must be ready on some
// replica) leave it out. One rule for the edge and the store; pure.

export interface VersionShape {
  readonly version: number;
  readonly adapterUri: string | null;
  readonly trainingRunId: string | null;
}

/** True for the version that stands for the base weights (no adapter to load). */
export function isBaseVersion(version: VersionShape): boolean {
  return version.version === 0 && version.adapterUri === null && version.trainingRunId === null;
}
