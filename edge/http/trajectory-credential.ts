// The trajectory a request writes and the key it proves it with (docs/edge.md, "Who writes a
// trajectory"): from the /t/<key>/ URL when the request came that way (set by routes/trajectory-url.ts),
// else from the `x-edgerl-trajectory` header: a key, or the id alone for a keyless trajectory opened
// before keys. Whether that key opens the trajectory is the store's check, in the statement that writes.
import type { Context } from 'hono';
import { readTrajectoryCredential, type TrajectoryCredential } from '../../protocol/trajectory-key.ts';
import type { EdgeEnv } from '../app-env.ts';
import { invalidField } from './api-error.ts';

export const trajectoryHeader = 'x-edgerl-trajectory';

/** The request's credential; a malformed header is a 400, a missing one too when `required`. */
export function trajectoryCredential(c: Context<EdgeEnv>, required: true): TrajectoryCredential;
export function trajectoryCredential(c: Context<EdgeEnv>, required: false): TrajectoryCredential | undefined;
export function trajectoryCredential(
  c: Context<EdgeEnv>,
  required: boolean,
): TrajectoryCredential | undefined {
  const fromUrl = c.get('trajectoryCredential');
  if (fromUrl) return fromUrl;
  const value = c.req.header(trajectoryHeader);
  if (value === undefined || value === '') {
    if (!required) return undefined;
    throw invalidField(
      trajectoryHeader,
      'header required: the trajectory key POST /v1/trajectories returned (or use its baseURL, /t/<key>/v1)',
    );
  }
  const credential = readTrajectoryCredential(value);
  if (!credential) {
    throw invalidField(
      trajectoryHeader,
      'must be the trajectory key POST /v1/trajectories returned (<id>.<secret>), or the id of a trajectory opened before keys',
    );
  }
  return credential;
}
