// The trajectory URL, /t/<key>/…: one client trajectory served to an agent whose only setting is a base
// URL (an OpenAI SDK's baseURL = /t/<key>/v1), and POST /t/<key>/finish to close it. On these paths the
// trajectory key is the credential, good for writing that one trajectory (docs/edge.md, "Who writes a
// trajectory"); the Authorization header SDKs always send is ignored. Mounted outside the bearer-key
// middleware. Leaves out reading trajectories and everything else /v1 serves: those need an API key.
import { Hono } from 'hono';
import { readTrajectoryCredential } from '../../protocol/trajectory-key.ts';
import type { EdgeEnv } from '../app-env.ts';
import { ApiError } from '../http/api-error.ts';
import { bodyLimit } from '../middleware/body-limit.ts';
import { withStore } from '../middleware/with-store.ts';
import type { TrajectoryHeads } from '../proxy/trajectory-heads.ts';
import type { StoreProvider } from '../store-provider.ts';
import { finishClientTrajectory } from './trajectories.ts';

export interface TrajectoryUrlDeps {
  readonly stores: StoreProvider;
  /** The OpenAI-compatible sub-apps served under /t/<key>/v1 (the proxy's chat completions, …). */
  readonly v1: readonly Hono<EdgeEnv>[];
  readonly maxBodyBytes: number;
  readonly heads?: TrajectoryHeads;
}

/** The path a key travels in, with the key masked: what logs and error messages may show. */
export function maskTrajectoryUrl(path: string): string {
  return path.replace(/^\/t\/[^/]+/, '/t/***');
}

export function trajectoryUrlRoutes(deps: TrajectoryUrlDeps) {
  const app = new Hono<EdgeEnv>()
    .use(async (c, next) => {
      const credential = readTrajectoryCredential(decodeURIComponent(c.req.param('key') ?? ''));
      if (!credential?.keyDigest) {
        throw new ApiError(
          'trajectory-key',
          'the trajectory URL needs its trajectory key: /t/<key>/v1, the baseURL POST /v1/trajectories returned',
        );
      }
      c.set('trajectoryCredential', credential);
      await next();
    })
    .use(withStore(deps.stores));
  for (const routes of deps.v1) app.route('/v1', routes);
  return app.post('/finish', bodyLimit(deps.maxBodyBytes), async (c) => {
    const { trajectoryId, keyDigest } = c.get('trajectoryCredential') as {
      trajectoryId: string;
      keyDigest: string;
    };
    return c.json(await finishClientTrajectory(c, trajectoryId, keyDigest, deps.heads));
  });
}
