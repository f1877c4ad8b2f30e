// The runner's lease on rollout episodes: claim them before running them (free, expired, or already
// the caller's; one episode with what its runner reads is claim-trajectory.ts), beat the ones it
// holds while no turn is being stored, and let them go when it stops. The expiry is the database's clock (now()), never a runner's, as for group and policy leases
// (leases.ts, policy-leases.ts). Turn appends renew the lease in their own statement (append-turn.ts);
// taking over stale episodes in bulk is the sweep's (sweep-trajectories.ts).
import { and, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id, leaseOwner, leaseSeconds } from './fields.ts';
import { parseInput } from './parse-input.ts';

/** What a runner passes to writes that renew its lease (a turn append, a beat). */
export const trajectoryLeaseSchema = z.object({ runner: leaseOwner, leaseSeconds });
export type TrajectoryLease = z.infer<typeof trajectoryLeaseSchema>;

/** `now() + leaseSeconds`, the expiry every renewal writes. */
export function leaseExpiry(seconds: number) {
  return sql`now() + ${seconds}::double precision * interval '1 second'`;
}

/**
 * Of the lease, the part a turn append may leave unrenewed: within it the append keeps the stored
 * expiry. An append that writes a new `lease_expires_at` changes an indexed column
 * (trajectories_running_lease_idx), so Postgres cannot make it a heap-only (HOT) update: it writes a
 * new entry into each of the table's six indexes and about five times the WAL (EXPLAIN (ANALYZE, WAL)
 * on Postgres 15: 7 records, 529 bytes, against 1 record, 101 bytes, keeping the expiry). Kept, the
 * expiry is still at least 0.9 of a lease ahead after every append, and the lease keeper beats an
 * episode half a lease after its last append at the latest (lease-keeper.ts, beats every third of it),
 * so one missed beat still comes before expiry. 0.1 is an edgerl choice: 6 s of the default 60 s lease.
 */
export const appendRenewalSlack = 0.1;

/**
 * The expiry a turn append writes: a full lease from now, unless the stored one is still more than
 * (1 − appendRenewalSlack) of a lease ahead (renewed moments ago), which it keeps (see above).
 */
export function appendLeaseExpiry(seconds: number) {
  return sql`case when lease_expires_at > now() + ${seconds * (1 - appendRenewalSlack)}::double precision * interval '1 second' then lease_expires_at else ${leaseExpiry(seconds)} end`;
}

const claimTrajectoriesSchema = trajectoryLeaseSchema.extend({
  trajectoryIds: z.array(id).min(1).max(10_000),
});
export type ClaimTrajectoriesInput = z.input<typeof claimTrajectoriesSchema>;

/**
 * Leases the listed running episodes to `runner`, each only when no runner holds it (a fresh rollout
 * slot's lease has none), its lease expired (the runner stopped), or `runner` holds it already (then
 * it is renewed). One statement, so two runners racing for an episode cannot both win. Returns the
 * ids claimed.
 */
export async function claimTrajectories(db: StoreDb, input: ClaimTrajectoriesInput): Promise<string[]> {
  const claim = parseInput(claimTrajectoriesSchema, input, 'claimTrajectories');
  const rows = await db
    .update(trajectories)
    .set({ runner: claim.runner, heartbeatAt: sql`now()`, leaseExpiresAt: leaseExpiry(claim.leaseSeconds) })
    .where(
      and(
        inArray(trajectories.id, claim.trajectoryIds),
        eq(trajectories.status, 'running'),
        // Only rollout slots are leased (docs/edge.md, "Who writes a trajectory").
        eq(trajectories.writer, 'runner'),
        or(
          isNull(trajectories.runner),
          isNull(trajectories.leaseExpiresAt),
          lt(trajectories.leaseExpiresAt, sql`now()`),
          eq(trajectories.runner, claim.runner),
        ),
      ),
    )
    .returning({ id: trajectories.id });
  return rows.map((row) => row.id);
}

const beatTrajectoriesSchema = trajectoryLeaseSchema.extend({
  trajectoryIds: z.array(id).min(1).max(10_000),
});
export type BeatTrajectoriesInput = z.input<typeof beatTrajectoriesSchema>;

/**
 * Renews the runner's lease on every listed episode it still holds and that is still running, in
 * one statement; returns the ids renewed. A missing id was taken over or ended: its run must stop.
 */
export async function beatTrajectories(db: StoreDb, input: BeatTrajectoriesInput): Promise<string[]> {
  const beat = parseInput(beatTrajectoriesSchema, input, 'beatTrajectories');
  const renewed = await db
    .update(trajectories)
    .set({ heartbeatAt: sql`now()`, leaseExpiresAt: leaseExpiry(beat.leaseSeconds) })
    .where(
      and(
        inArray(trajectories.id, beat.trajectoryIds),
        eq(trajectories.runner, beat.runner),
        eq(trajectories.status, 'running'),
      ),
    )
    .returning({ id: trajectories.id });
  return renewed.map((row) => row.id);
}

const releaseTrajectoriesSchema = z.object({
  runner: leaseOwner,
  trajectoryIds: z.array(id).min(1).max(10_000),
});
export type ReleaseTrajectoriesInput = z.input<typeof releaseTrajectoriesSchema>;

/**
 * Gives up the runner's lease on the listed episodes (it stops without ending them), so another
 * runner takes them over at once instead of after expiry, and that takeover is not counted as a
 * resume (the runner stopped cleanly; it did not die). Returns the ids released.
 */
export async function releaseTrajectories(db: StoreDb, input: ReleaseTrajectoriesInput): Promise<string[]> {
  const release = parseInput(releaseTrajectoriesSchema, input, 'releaseTrajectories');
  const released = await db
    .update(trajectories)
    // Expired now rather than cleared: to the sweep it is stale at once (a cleared lease reads as
    // never claimed, which it waits a whole lease for, in case its queue message is on its way).
    .set({ runner: null, leaseExpiresAt: sql`now()` })
    .where(
      and(
        inArray(trajectories.id, release.trajectoryIds),
        eq(trajectories.runner, release.runner),
        eq(trajectories.status, 'running'),
      ),
    )
    .returning({ id: trajectories.id });
  return released.map((row) => row.id);
}
