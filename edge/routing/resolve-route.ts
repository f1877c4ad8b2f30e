// Policy routing: which served model (adapter name) a rollout or a proxied conversation uses, and
// which policy version and experiment arm that records on the trajectory. A request names a policy
// (a version's adapter name such as `agent@7`, or a policy name meaning its default version), or an
// experiment (by name or id) whose arms split traffic by weight, or neither (the edge's default model,
// itself a policy or version name when the store knows it, else a served model name).
import type { Store } from '../../db/store.ts';
import { getPolicyVersion } from '../../db/store/get-policy-version.ts';
import { invalidField } from '../http/api-error.ts';
import { armIndex, unitHash } from '../../experiments/pick-arm.ts';
import { errorMessage } from '../../protocol/error-message.ts';

export interface RouteRequest {
  readonly policy?: string;
  readonly experiment?: string;
  /** Hashed with the experiment id to pick the arm; the same key always gets the same arm. */
  readonly stickinessKey: string;
}

export interface Route {
  /** What goes into the inference request's `model`. */
  readonly model: string;
  readonly policyVersionId?: string;
  readonly experimentId?: string;
  readonly experimentArmId?: string;
  readonly armName?: string;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Throws a 400 naming `policy` or `experiment` when the name resolves to nothing servable. */
export async function resolveRoute(
  store: Store,
  request: RouteRequest,
  defaultModel: string | undefined,
): Promise<Route> {
  if (request.policy !== undefined && request.experiment !== undefined) {
    throw invalidField('experiment', 'name a policy or an experiment, not both');
  }
  if (request.experiment !== undefined)
    return routeExperiment(store, request.experiment, request.stickinessKey);
  if (request.policy !== undefined) {
    const version = await store.resolvePolicyVersion(request.policy);
    if (!version) {
      throw invalidField(
        'policy',
        `no policy version is served as "${request.policy}", and no policy of that name has a default version`,
      );
    }
    if (version.status === 'retired') throw invalidField('policy', `${version.adapterName} is retired`);
    return { model: version.adapterName, policyVersionId: version.id };
  }
  if (!defaultModel) {
    throw invalidField('policy', 'required: this edge has no default model (set DEFAULT_MODEL)');
  }
  // DEFAULT_MODEL may name a policy: then requests follow its promoted default version (and record
  // it), so `edgerl ab promote` takes effect without redeploying. Otherwise it is a served model as is.
  const version = await store.resolvePolicyVersion(defaultModel);
  if (version && version.status !== 'retired')
    return { model: version.adapterName, policyVersionId: version.id };
  return { model: defaultModel };
}

async function routeExperiment(store: Store, reference: string, stickinessKey: string): Promise<Route> {
  const { experiment, arms } = await store
    .getExperiment(uuidPattern.test(reference) ? { experimentId: reference } : { name: reference })
    .catch((error: unknown) => {
      throw invalidField('experiment', errorMessage(error));
    });
  if (experiment.status !== 'running') {
    throw invalidField('experiment', `${experiment.name} is ${experiment.status}; it takes no traffic`);
  }
  // Arms come sorted by name, so the interval each arm owns does not depend on insertion order.
  const u = await unitHash(experiment.id, stickinessKey);
  const arm =
    arms[
      armIndex(
        arms.map((candidate) => candidate.weight),
        u,
      )
    ];
  if (!arm) throw invalidField('experiment', `${experiment.name} has no arm with a weight above 0`);
  const version = await getPolicyVersion(store.db, arm.policyVersionId);
  return {
    model: version.adapterName,
    policyVersionId: version.id,
    experimentId: experiment.id,
    experimentArmId: arm.id,
    armName: arm.name,
  };
}
