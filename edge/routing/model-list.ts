// What GET /v1/models lists (routes/models.ts): the names the recording proxy accepts as `model`, in
// OpenAI's list shape (https://platform.openai.com/docs/api-reference/models/list), so an SDK's or a
// chat UI's model picker offers names that work. Pure: the store's policies and the edge's default
// model in, the list out. Leaves out what the inference endpoint serves beyond them (its own /v1/models).
import type { PolicyLineage } from '../../db/store.ts';

export interface ModelCard {
  readonly id: string;
  readonly object: 'model';
  /** Unix seconds the policy or version was created; 0 for a name the store does not know. */
  readonly created: number;
  readonly owned_by: string;
}

export interface ModelList {
  readonly object: 'list';
  readonly data: readonly ModelCard[];
}

/** OpenAI's `owned_by`; as serve-model's list says (serve/models-route.ts). */
const ownedBy = 'edgerl';

const card = (id: string, created: Date | undefined): ModelCard => ({
  id,
  object: 'model',
  created: created ? Math.floor(created.getTime() / 1000) : 0,
  owned_by: ownedBy,
});

/**
 * For a call that names no trajectory with a recorded route, the proxy routes the body's `model`
 * (proxy-model.ts, resolve-route.ts): a policy name to its default version, a version's served name
 * (`agent@3`) to that version, anything else to the endpoint as is. So the list is the edge's default
 * model first (what a trajectory started without a policy is sent with), then each policy and its
 * published versions; a `training` version is not served yet and a retired one is refused (400).
 */
export function modelCatalogue(
  lineages: readonly PolicyLineage[],
  defaultModel: string | undefined,
): ModelList {
  const cards = new Map<string, ModelCard>();
  const add = (id: string, created: Date | undefined) => {
    if (!cards.has(id)) cards.set(id, card(id, created));
  };
  if (defaultModel) {
    const named = lineages.find(({ policy, versions }) =>
      policy.name === defaultModel ? true : versions.some((version) => version.adapterName === defaultModel),
    );
    const version = named?.versions.find((candidate) => candidate.adapterName === defaultModel);
    add(defaultModel, version?.createdAt ?? named?.policy.createdAt);
  }
  for (const { policy, versions } of lineages) {
    add(policy.name, policy.createdAt);
    for (const version of versions) {
      if (version.status === 'published') add(version.adapterName, version.createdAt);
    }
  }
  return { object: 'list', data: [...cards.values()] };
}

/**
 * A trajectory that recorded its route is sent with that model on every call, whatever the body's
 * `model` says (proxy-model.ts): the one name a picker should offer for it.
 */
export function trajectoryModelList(model: string, created: Date | undefined): ModelList {
  return { object: 'list', data: [card(model, created)] };
}
