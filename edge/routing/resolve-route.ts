// Policy routing: which served model (adapter name) a rollout or a proxied conversation uses, and
// which policy version and experiment arm that records on the trajectory. A request names a policy
// (a version's adapter name such as `agent@7`, or a policy name meaning its default version), or an
// experiment (by name or id) whose arms split traffic by weight, or neither (the edge's default model,
// itself a policy or version name when the store knows it, else a served model name). A base version
// is served under its base model's name (served-model.ts).
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { Store } from '../../db/store.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { isUuidLike } from '../../protocol/is-uuid-like.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import { pickArm } from '../../experiments/pick-arm.ts';
import type { ReplicaPicker, ReplicaRouter } from './replica-router.ts';
import type { NamedVersion, RouteCache } from './route-cache.ts';
import type { Route } from './route.ts';
import { servedModel } from './served-model.ts';

export interface RouteRequest {
  readonly policy?: string;
  readonly experiment?: string;
  /** Hashed with the experiment id to pick the arm; the same key always gets the same arm. */
  readonly stickinessKey: string;
}

/** What an edge process routes with beyond the store: its fleet (replica-router.ts) and route table. */
export interface RouteContext {
  readonly fleet?: ReplicaRouter;
  readonly routes?: RouteCache;
}

/**
 * Throws a 400 naming `policy` or `experiment` when the name resolves to nothing servable; with a
 * fleet, a 503 when the version it resolves to is ready on no replica (refuseUnheld). With `routes`,
 * a policy or version name is looked up through the edge's route table (route-cache.ts).
 */
export async function resolveRoute(
  store: Store,
  request: RouteRequest,
  defaultModel: string | undefined,
  { fleet, routes }: RouteContext = {},
): Promise<Route> {
  const route = await routeOf(store, request, defaultModel, routes);
  // Read through `store`: it may be a transaction the route is resolved in.
  if (fleet) await refuseUnheld(fleet.forStore(store), route);
  return route;
}

/**
 * Over a fleet, a route to a trained version that no replica holds is refused before anything is
 * recorded (503: a catch-up may load it), rather than started and left to fail at its first call.
 */
async function refuseUnheld(fleet: ReplicaPicker, route: Route): Promise<void> {
  if (!route.policyVersionId) return;
  const choice = await fleet.choose(route.model);
  if (choice.replicas.length === 0) {
    throw new ApiError(
      'unavailable',
      `${route.model} is ready on no inference replica (publications); run edgerl fleet catch-up`,
    );
  }
}

async function routeOf(
  store: Store,
  request: RouteRequest,
  defaultModel: string | undefined,
  routes: RouteCache | undefined,
): Promise<Route> {
  if (request.policy !== undefined && request.experiment !== undefined) {
    throw invalidField('experiment', 'name a policy or an experiment, not both');
  }
  if (request.experiment !== undefined)
    return routeExperiment(store, request.experiment, request.stickinessKey);
  if (request.policy !== undefined) {
    const route = await routeNamed(store, request.policy, 'policy', '', routes);
    if (!route) {
      throw invalidField(
        'policy',
        `no policy version is served as "${request.policy}", and no policy of that name has a default version`,
      );
    }
    return route;
  }
  if (!defaultModel) {
    throw invalidField('policy', 'required: this edge has no default model (set EDGERL_DEFAULT_MODEL)');
  }
  // DEFAULT_MODEL may name a policy: then requests follow its promoted default version (and record
  // it), so `edgerl ab promote` takes effect without redeploying. Otherwise it is a served model as is.
  return (
    (await routeNamed(store, defaultModel, 'policy', "the edge's default model ", routes)) ?? {
      model: defaultModel,
    }
  );
}

/**
 * The route for a policy name (its default version) or a version's served name; undefined when the
 * store knows neither (then the name may still be a model the endpoint serves as is). Throws a 400
 * naming `field` when the name is a retired version (see refuseRetired).
 */
export async function routeNamed(
  store: Store,
  name: string,
  field: string,
  whose = '',
  routes?: RouteCache,
): Promise<Route | undefined> {
  const named = routes
    ? await routes.lookup(name, () => lookupName(store, name))
    : await lookupName(store, name);
  if (!named) return undefined;
  // Checked on every use, cached or not: the cache keeps what the name resolved to, not the verdict.
  refuseRetired(named.version, field, `${whose}${named.version.adapterName}`);
  return { model: named.model, policyVersionId: named.version.id };
}

async function lookupName(store: Store, name: string): Promise<NamedVersion | undefined> {
  const version = await store.resolvePolicyVersion(name);
  if (!version) return undefined;
  return { version, model: await servedModel(store, version) };
}

/**
 * The one rule for retired versions, for the router and the proxy alike: a retired version takes no
 * new traffic, however it is named (a request's policy, an experiment's arm, DEFAULT_MODEL, the
 * proxy's header or model), and is refused with a 400 that names it. Retiring
 * (Store.retirePolicyVersion) is how a version leaves service for good: it is never published again,
 * and a policy's default cannot be retired, so its traffic is moved off first (`edgerl ab promote`,
 * `edgerl ab rollback`, setDefaultVersion). What recorded its route before the retirement keeps it
 * (a route is read back from its row, never resolved again): every turn of a trajectory and every
 * member of a group must come from the version on the row, which training and the A/B report count
 * them under, and cutting them off mid-way would turn in-flight episodes into errors.
 */
function refuseRetired(version: PolicyVersion, field: string, subject: string): void {
  if (version.status === 'retired')
    throw invalidField(field, `${subject} is retired; it takes no new traffic`);
}

async function routeExperiment(store: Store, reference: string, stickinessKey: string): Promise<Route> {
  const { experiment, arms } = await store
    .getExperiment(isUuidLike(reference) ? { experimentId: reference } : { name: reference })
    .catch((error: unknown) => {
      throw invalidField('experiment', errorMessage(error));
    });
  if (experiment.status !== 'running') {
    throw invalidField('experiment', `${experiment.name} is ${experiment.status}; it takes no traffic`);
  }
  // Arms come sorted by name, so the interval each arm owns does not depend on insertion order.
  const arm = await pickArm(experiment.id, arms, stickinessKey);
  if (!arm) throw invalidField('experiment', `${experiment.name} has no arm with a weight above 0`);
  const version = await store.getPolicyVersion(arm.policyVersionId);
  refuseRetired(
    version,
    'experiment',
    `${experiment.name}: arm ${arm.name}'s version ${version.adapterName}`,
  );
  return {
    model: await servedModel(store, version),
    policyVersionId: version.id,
    experimentId: experiment.id,
    experimentArmId: arm.id,
    armName: arm.name,
  };
}
