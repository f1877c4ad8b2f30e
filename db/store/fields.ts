// zod field schemas that match the columns they are written to, so a value the database would
// reject (an int beyond int4, a NaN) is refused at the boundary with its field named.
import { z } from 'zod';

/** A Postgres `integer` (int4). */
export const int4 = z
  .number()
  .int()
  .min(-(2 ** 31))
  .max(2 ** 31 - 1);
export const nonNegativeInt4 = int4.min(0);
export const id = z.uuid();
export const name = z.string().trim().min(1).max(200);
/** Who holds a lease: a trainer's stable name (host/pid or a run id). */
export const leaseOwner = z.string().min(1).max(200);
/** Lease length in seconds: more than 0, at most a day. */
export const leaseSeconds = z.number().positive().max(86_400);
