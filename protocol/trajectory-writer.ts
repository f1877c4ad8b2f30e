// Who writes a trajectory (docs/edge.md, "Who writes a trajectory"): the closed set stored in
// `trajectories.writer` and, per turn, in `turns.writer`. What each may do is enforced by the store's
// append and finish statements; this file only names them.

/**
 * `runner`: a rollout slot (POST /v1/rollouts), written and finished only by the episode loop holding
 * its lease. `client`: opened by POST /v1/trajectories for the recording proxy, written with its
 * trajectory key. `ingest`: stored whole (POST /v1/trajectories with turns, `edgerl import`), never
 * written again.
 */
export const trajectoryWriters = ['runner', 'client', 'ingest'] as const;
export type TrajectoryWriter = (typeof trajectoryWriters)[number];
