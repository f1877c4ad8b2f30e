// The keys POST /v1/trajectories returns, kept by trajectory id so a test that names trajectories by id
// can write them (docs/edge.md, "Who writes a trajectory"): the x-edgerl-trajectory header with the key,
// or, for a test that appends through the store directly, the key's digest the store compares.
import { trajectoryKeyDigest } from '../../protocol/trajectory-key.ts';

export class TrajectoryKeys {
  readonly #keys = new Map<string, string>();

  /** Keeps the key of a start response's body; returns the trajectory's id. */
  remember(started: unknown): string {
    const { trajectory, key } = started as { trajectory: { id: string }; key: string };
    this.#keys.set(trajectory.id, key);
    return trajectory.id;
  }

  key(trajectoryId: string): string | undefined {
    return this.#keys.get(trajectoryId);
  }

  /** The header that writes the trajectory: its key, or its id when it was started without one. */
  header(trajectoryId: string): { 'x-edgerl-trajectory': string } {
    return { 'x-edgerl-trajectory': this.#keys.get(trajectoryId) ?? trajectoryId };
  }

  /** The client's access for the store's appendTurns (its last argument): the digest of the trajectory's key. */
  storeAccess(trajectoryId: string): { keyDigest: string } {
    const key = this.#keys.get(trajectoryId);
    if (key === undefined) throw new Error(`no trajectory key kept for ${trajectoryId}`);
    return { keyDigest: trajectoryKeyDigest(key) };
  }
}
