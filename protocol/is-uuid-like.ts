// Whether a reference someone gives (an experiment, a policy version, a trajectory) is an id rather than a
// name: any 8-4-4-4-12 hex string, as Postgres's uuid type takes it, so zod's z.guid() rather than z.uuid(),
// which also wants RFC 9562's version and variant digits (https://zod.dev/api#uuids). Names that would pass
// are refused where names are made (db/store/create-experiment.ts), so a reference is never both.
import { z } from 'zod';

/** An id in the form Postgres's uuid type reads (https://www.postgresql.org/docs/current/datatype-uuid.html). */
export const uuidLike = z.guid();

/** True when `reference` is shaped like an id (any case), so it is looked up as one, not as a name. */
export function isUuidLike(reference: string): boolean {
  return uuidLike.safeParse(reference).success;
}
