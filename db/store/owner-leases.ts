// A restarted trainer's leases. Its owner name is stable across restarts (one trainer per checkpoint
// directory), so after a crash it may still hold leases it can no longer account for: it takes back
// the groups its last checkpoint already includes (reclaimGroups) and hands back the rest
// (releaseOwnerLeases) instead of waiting for them to expire. Leaves out claiming new groups
// (claim-groups.ts).
import { and, eq, inArray, isNull, lt, notInArray, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import type { StoreDb } from '../store-db.ts';
import { defaultLeaseSeconds } from '../store-constants.ts';
import { id, leaseOwner, leaseSeconds } from './fields.ts';
import { claimableStatuses } from './group-transitions.ts';
import { parseInput } from './parse-input.ts';

const reclaimGroupsSchema = z.object({
  owner: leaseOwner,
  groupIds: z.array(id).min(1).max(1000),
  leaseSeconds: leaseSeconds.default(defaultLeaseSeconds),
});
export type ReclaimGroupsInput = z.input<typeof reclaimGroupsSchema>;

export interface ReclaimedGroups {
  /** Groups now leased to the caller, in the order asked for. */
  readonly claimed: RolloutGroup[];
  /** Groups it could not take: trained or failed meanwhile, or leased by another trainer. */
  readonly lost: { readonly groupId: string; readonly why: string }[];
}

/**
 * Leases exactly the listed groups, each only if it is still claimable (`complete`/`scored`) and free,
 * expired, or already the caller's. Takes what it can; the caller decides what a loss means.
 */
export async function reclaimGroups(db: StoreDb, input: ReclaimGroupsInput): Promise<ReclaimedGroups> {
  const request = parseInput(reclaimGroupsSchema, input, 'reclaimGroups');
  return db.transaction(async (tx) => {
    const rows = await tx
      .select()
      .from(rolloutGroups)
      .where(inArray(rolloutGroups.id, request.groupIds))
      .orderBy(rolloutGroups.id)
      .for('update');
    const byId = new Map(rows.map((row) => [row.id, row]));
    const now = Date.now();
    const takeable: string[] = [];
    const lost: { groupId: string; why: string }[] = [];
    for (const groupId of request.groupIds) {
      const row = byId.get(groupId);
      if (!row) {
        lost.push({ groupId, why: 'does not exist' });
      } else if (!(claimableStatuses as readonly string[]).includes(row.status)) {
        lost.push({ groupId, why: `is ${row.status}` });
      } else if (
        row.leaseOwner !== null &&
        row.leaseOwner !== request.owner &&
        row.leaseExpiresAt !== null &&
        row.leaseExpiresAt.getTime() > now
      ) {
        lost.push({ groupId, why: `is leased by ${row.leaseOwner}` });
      } else {
        takeable.push(groupId);
      }
    }
    if (takeable.length === 0) return { claimed: [], lost };
    const claimed = await tx
      .update(rolloutGroups)
      .set({
        leaseOwner: request.owner,
        leaseExpiresAt: sql`now() + ${request.leaseSeconds}::double precision * interval '1 second'`,
      })
      .where(
        and(
          inArray(rolloutGroups.id, takeable),
          // Re-checked in SQL with the database clock (the JS check above used this machine's).
          or(
            isNull(rolloutGroups.leaseExpiresAt),
            lt(rolloutGroups.leaseExpiresAt, sql`now()`),
            eq(rolloutGroups.leaseOwner, request.owner),
          ),
        ),
      )
      .returning();
    const got = new Set(claimed.map((row) => row.id));
    for (const groupId of takeable) {
      if (!got.has(groupId)) lost.push({ groupId, why: 'is leased by another trainer' });
    }
    const order = request.groupIds;
    return { claimed: claimed.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id)), lost };
  });
}

const releaseOwnerLeasesSchema = z.object({
  owner: leaseOwner,
  /** Groups to keep leased (those the caller's checkpoint includes). */
  except: z.array(id).max(10_000).default([]),
});
export type ReleaseOwnerLeasesInput = z.input<typeof releaseOwnerLeasesSchema>;

/** Clears every lease `owner` holds except the listed ones; returns the released group ids. */
export async function releaseOwnerLeases(db: StoreDb, input: ReleaseOwnerLeasesInput): Promise<string[]> {
  const request = parseInput(releaseOwnerLeasesSchema, input, 'releaseOwnerLeases');
  const released = await db
    .update(rolloutGroups)
    .set({ leaseOwner: null, leaseExpiresAt: null })
    .where(
      and(
        eq(rolloutGroups.leaseOwner, request.owner),
        request.except.length > 0 ? notInArray(rolloutGroups.id, request.except) : undefined,
      ),
    )
    .returning({ id: rolloutGroups.id });
  return released.map((row) => row.id).sort();
}
