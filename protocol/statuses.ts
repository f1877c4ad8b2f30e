// The closed sets of lifecycle states shared by the store, the edge and the trainer.
export const trajectoryStatuses = ['running', 'finished', 'truncated', 'error'] as const;
export type TrajectoryStatus = (typeof trajectoryStatuses)[number];

/** `unscored`: the judge failed after its retries; the group is kept, never trained on with made-up scores. */
export const groupStatuses = ['running', 'complete', 'scored', 'unscored', 'trained', 'failed'] as const;
export type GroupStatus = (typeof groupStatuses)[number];

export const policyVersionStatuses = ['training', 'published', 'retired'] as const;
export type PolicyVersionStatus = (typeof policyVersionStatuses)[number];

/**
 * `train`: what the trainer learns from; `validation`: held out from training, scored per published
 * version to choose the one that ships; `eval`: held out from both, for the final A/B comparison. The
 * trainer claims groups on `train` tasks only (db/store/claim-groups.ts `splits`).
 */
export const taskSplits = ['train', 'eval', 'validation'] as const;
export type TaskSplit = (typeof taskSplits)[number];

/**
 * One adapter on one inference replica (`publications.state`), in the three phases of a fleet
 * publication (OpenPipe ART's replica router: prepare, verify, commit): `loading` while it is copied
 * and loaded there, `verified` once the replica lists it and answered a probe through it, `ready`
 * once the version is committed with that replica (the only state requests are routed to), and
 * `quarantined` when a phase failed there or the replica stopped serving it (retried by catch-up).
 */
export const publicationStates = ['loading', 'verified', 'ready', 'quarantined'] as const;
export type PublicationState = (typeof publicationStates)[number];

export const experimentStatuses = ['running', 'stopped'] as const;
export type ExperimentStatus = (typeof experimentStatuses)[number];

export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
