// POST /v1/trajectories carries either a start (no turns: the agent records through the proxy) or
// whole recorded episodes: one episode with its `turns`, or `{ "episodes": [...] }`. This tells them
// apart and names a refused field as the client sent it (no `episodes.0.` on a single episode).
// Validation of the episodes themselves is the store's (ingestTrajectories).
import type { IngestEpisodeInput } from '../../db/store.ts';
import { StoreError } from '../../db/errors.ts';
import { ApiError, invalidField } from '../http/api-error.ts';

export type TrajectoriesBody =
  | { readonly kind: 'start' }
  | { readonly kind: 'ingest'; readonly episodes: IngestEpisodeInput[]; readonly single: boolean };

export function classifyTrajectoriesBody(json: unknown): TrajectoriesBody {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { kind: 'start' };
  if ('episodes' in json) {
    const { episodes, ...rest } = json as { episodes: unknown };
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw invalidField(extra, 'unknown field (beside `episodes`)');
    if (!Array.isArray(episodes)) throw invalidField('episodes', 'must be an array of episodes');
    return { kind: 'ingest', episodes: episodes as IngestEpisodeInput[], single: false };
  }
  if ('turns' in json) return { kind: 'ingest', episodes: [json as IngestEpisodeInput], single: true };
  return { kind: 'start' };
}

/** A store refusal of an ingest as the API's error, its field named from the request's root. */
export function ingestError(error: unknown, single: boolean): unknown {
  if (!(error instanceof StoreError)) return error;
  const code = apiCodes[error.code as keyof typeof apiCodes];
  const issue = error.issues[0];
  if (!code || !issue) return error;
  // An unknown key is reported on its parent; name the key itself (as parseValue does).
  const unknownKey = issue.code === 'unrecognized_keys';
  const path = unknownKey ? [...issue.path, issue.keys[0] ?? ''] : [...issue.path];
  const fromRoot = single && path[0] === 'episodes' && path[1] === 0 ? path.slice(2) : path;
  const field = fromRoot.length > 0 ? fromRoot.join('.') : 'body';
  return new ApiError(code, `${field}: ${unknownKey ? 'unknown field' : issue.message}`, {
    field,
    cause: error,
  });
}

/** The store refusals an ingest names a field for; others keep the app's one mapping (error-response.ts). */
const apiCodes = {
  validation: 'invalid-request',
  'not-found': 'not-found',
  conflict: 'conflict',
} as const;
