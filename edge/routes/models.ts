// GET /v1/models: the OpenAI-compatible model list, at the root (an API key with the record scope) and
// under the trajectory URL (/t/<key>/v1/models, its key the credential), so an SDK or chat UI that
// lists models before calling finds the names the proxy accepts (routing/model-list.ts says which).
// A request that names a trajectory (the URL, or `x-edgerl-trajectory`) gets the model that
// trajectory's calls are sent with; any other gets the policies and the default model.
import { Hono } from 'hono';
import { isStoreError } from '../../db/errors.ts';
import { accessRefusal, type Store } from '../../db/store.ts';
import type { TrajectoryCredential } from '../../protocol/trajectory-key.ts';
import type { EdgeEnv } from '../app-env.ts';
import { invalidField } from '../http/api-error.ts';
import { trajectoryCredential } from '../http/trajectory-credential.ts';
import { type ModelList, modelCatalogue, trajectoryModelList } from '../routing/model-list.ts';
import { recordedRoute } from '../routing/route.ts';

export interface ModelsRouteDeps {
  /** The model a trajectory started without a policy is sent with (EdgeDeps.defaultModel). */
  readonly defaultModel?: string;
}

export function modelsRoutes(deps: ModelsRouteDeps) {
  return new Hono<EdgeEnv>().get('/models', async (c) => {
    const store = c.var.store;
    const credential = trajectoryCredential(c, false);
    const named = credential ? await trajectoryModels(store, credential) : undefined;
    return c.json(named ?? modelCatalogue(await store.policyLineage(), deps.defaultModel));
  });
}

/** The trajectory's recorded model, read with its key checked as the proxy checks it; none recorded: undefined. */
async function trajectoryModels(
  store: Store,
  credential: TrajectoryCredential,
): Promise<ModelList | undefined> {
  const head = await store.getTrajectoryHead(credential.trajectoryId).catch((error: unknown) => {
    if (isStoreError(error, 'validation')) {
      throw invalidField('x-edgerl-trajectory', 'must be a trajectory id (a uuid)');
    }
    throw error;
  });
  const refused = accessRefusal(
    { writer: head.trajectory.writer, keyDigest: head.keyDigest },
    { writer: 'client', ...(credential.keyDigest !== undefined ? { keyDigest: credential.keyDigest } : {}) },
    credential.trajectoryId,
  );
  if (refused) throw refused;
  const route = recordedRoute(head.trajectory);
  if (!route) return undefined;
  const version = route.policyVersionId ? await store.getPolicyVersion(route.policyVersionId) : undefined;
  return trajectoryModelList(route.model, version?.createdAt);
}
