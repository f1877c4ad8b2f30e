// Keeping and giving back claimed groups: renewLease extends a lease the caller still holds, and
// releaseGroups hands groups back untrained. Both act only on groups whose lease_owner is the caller.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { rolloutGroups } from '../schema/rollout-groups.ts';
import type { StoreDb } from '../store-db.ts';
import { defaultLeaseSeconds } from '../store-constants.ts';
import { id, leaseOwner, leaseSeconds } from './fields.ts';
import { parseInput } from './parse-input.ts';

const renewLeaseSchema = z.object({
  owner: leaseOwner,
  groupIds: z.array(id).min(1).max(1000),
  leaseSeconds: leaseSeconds.default(defaultLeaseSeconds),
});
export type RenewLeaseInput = z.input<typeof renewLeaseSchema>;

/**
 * Extends the lease on every listed group, or on none: `lease-lost` when another trainer has claimed
 * one (an expired lease nobody claimed yet is still the caller's and is renewed).
 */
export async function renewLease(db: StoreDb, input: RenewLeaseInput): Promise<Date> {
  const renewal = parseInput(renewLeaseSchema, input, 'renewLease');
  return db.transaction(async (tx) => {
    const renewed = await tx
      .update(rolloutGroups)
      .set({ leaseExpiresAt: sql`now() + ${renewal.leaseSeconds}::double precision * interval '1 second'` })
      .where(and(inArray(rolloutGroups.id, renewal.groupIds), eq(rolloutGroups.leaseOwner, renewal.owner)))
      .returning({ id: rolloutGroups.id, leaseExpiresAt: rolloutGroups.leaseExpiresAt });
    const held = new Set(renewed.map((row) => row.id));
    const lost = renewal.groupIds.filter((groupId) => !held.has(groupId));
    if (lost.length > 0) {
      throw new StoreError('lease-lost', `${renewal.owner} no longer holds group(s) ${lost.join(', ')}`);
    }
    const expiry = renewed[0]?.leaseExpiresAt;
    if (!expiry) throw new Error('renewed lease has no expiry');
    return expiry;
  });
}

const releaseGroupsSchema = z.object({ owner: leaseOwner, groupIds: z.array(id).min(1).max(1000) });
export type ReleaseGroupsInput = z.input<typeof releaseGroupsSchema>;

/** Clears the caller's lease on the listed groups; returns the ids it released (others are skipped). */
export async function releaseGroups(db: StoreDb, input: ReleaseGroupsInput): Promise<string[]> {
  const release = parseInput(releaseGroupsSchema, input, 'releaseGroups');
  const released = await db
    .update(rolloutGroups)
    .set({ leaseOwner: null, leaseExpiresAt: null })
    .where(and(inArray(rolloutGroups.id, release.groupIds), eq(rolloutGroups.leaseOwner, release.owner)))
    .returning({ id: rolloutGroups.id });
  return released.map((row) => row.id);
}
