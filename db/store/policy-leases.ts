// The policy lease (one trainer advances a policy at a time): take it (free, expired, or already the
// caller's) in one atomic upsert, renew it, release it, and check it inside a commit. Taking it also
// ends as `interrupted` the runs a crashed trainer left `running` on the policy. Leaves out the group
// leases (leases.ts), which work the same way per group.
import { and, eq, inArray, notInArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type PolicyLease, policyLeases } from '../schema/policy-leases.ts';
import { trainingRuns } from '../schema/policies.ts';
import type { StoreDb } from '../store-db.ts';
import { defaultLeaseSeconds } from '../store-constants.ts';
import { id, leaseOwner, leaseSeconds } from './fields.ts';
import { parseInput } from './parse-input.ts';

const takePolicyLeaseSchema = z.object({
  policyId: id,
  owner: leaseOwner,
  leaseSeconds: leaseSeconds.default(defaultLeaseSeconds),
  /** Runs the caller carries on (its unpublished checkpoint's): left `running`. */
  keepRunIds: z.array(id).max(100).default([]),
});
export type TakePolicyLeaseInput = z.input<typeof takePolicyLeaseSchema>;

export type PolicyLeaseTake =
  | { readonly taken: true; readonly lease: PolicyLease; readonly interruptedRunIds: string[] }
  | { readonly taken: false; readonly holder: string; readonly expiresAt: Date };

/**
 * Takes the policy's lease when nobody holds it, its holder's lease has expired (a crashed trainer),
 * or the caller holds it already (then it is renewed). Held by another: `taken: false` with the holder.
 */
export async function takePolicyLease(db: StoreDb, input: TakePolicyLeaseInput): Promise<PolicyLeaseTake> {
  const request = parseInput(takePolicyLeaseSchema, input, 'takePolicyLease');
  return db.transaction(async (tx) => {
    const expiry = sql`now() + ${request.leaseSeconds}::double precision * interval '1 second'`;
    // One statement, so two trainers racing for a free or expired lease cannot both get it.
    const [lease] = await tx
      .insert(policyLeases)
      .values({ policyId: request.policyId, owner: request.owner, expiresAt: expiry })
      .onConflictDoUpdate({
        target: policyLeases.policyId,
        set: {
          owner: sql`excluded.owner`,
          expiresAt: sql`excluded.expires_at`,
          takenAt: sql`case when ${policyLeases.owner} = excluded.owner then ${policyLeases.takenAt} else now() end`,
        },
        setWhere: sql`${policyLeases.owner} = excluded.owner or ${policyLeases.expiresAt} < now()`,
      })
      .returning();
    if (!lease) {
      const [held] = await tx.select().from(policyLeases).where(eq(policyLeases.policyId, request.policyId));
      if (!held) throw new Error('policy lease neither taken nor held');
      return { taken: false, holder: held.owner, expiresAt: held.expiresAt };
    }
    // Holding the lease now, any other run still `running` on this policy has no trainer behind it.
    const interrupted = await tx
      .update(trainingRuns)
      .set({
        status: 'interrupted',
        errorReason: `its trainer stopped without ending it; ${request.owner} took the policy lease over`,
        finishedAt: sql`now()`,
      })
      .where(
        and(
          eq(trainingRuns.policyId, request.policyId),
          eq(trainingRuns.status, 'running'),
          request.keepRunIds.length > 0 ? notInArray(trainingRuns.id, request.keepRunIds) : undefined,
        ),
      )
      .returning({ id: trainingRuns.id });
    return { taken: true, lease, interruptedRunIds: interrupted.map((row) => row.id).sort() };
  });
}

const renewPolicyLeaseSchema = z.object({
  policyId: id,
  owner: leaseOwner,
  leaseSeconds: leaseSeconds.default(defaultLeaseSeconds),
});
export type RenewPolicyLeaseInput = z.input<typeof renewPolicyLeaseSchema>;

/** Extends the caller's policy lease; `policy-lease-lost` when another trainer holds it (or nobody). */
export async function renewPolicyLease(db: StoreDb, input: RenewPolicyLeaseInput): Promise<Date> {
  const renewal = parseInput(renewPolicyLeaseSchema, input, 'renewPolicyLease');
  const [row] = await db
    .update(policyLeases)
    .set({ expiresAt: sql`now() + ${renewal.leaseSeconds}::double precision * interval '1 second'` })
    .where(and(eq(policyLeases.policyId, renewal.policyId), eq(policyLeases.owner, renewal.owner)))
    .returning({ expiresAt: policyLeases.expiresAt });
  if (!row) throw policyLeaseLost(renewal.owner, renewal.policyId);
  return row.expiresAt;
}

const releasePolicyLeaseSchema = z.object({ policyId: id, owner: leaseOwner });
export type ReleasePolicyLeaseInput = z.input<typeof releasePolicyLeaseSchema>;

/** Gives the caller's policy lease back; false when it did not hold it. */
export async function releasePolicyLease(db: StoreDb, input: ReleasePolicyLeaseInput): Promise<boolean> {
  const release = parseInput(releasePolicyLeaseSchema, input, 'releasePolicyLease');
  const released = await db
    .delete(policyLeases)
    .where(and(eq(policyLeases.policyId, release.policyId), eq(policyLeases.owner, release.owner)))
    .returning({ policyId: policyLeases.policyId });
  return released.length > 0;
}

/**
 * Inside a commit's transaction: locks the policy's lease row and throws `policy-lease-lost` unless
 * `owner` holds it. An expired lease nobody took over is still the caller's (as for group leases).
 */
export async function assertPolicyLease(tx: StoreDb, policyIds: readonly string[], owner: string) {
  if (policyIds.length === 0) return;
  const rows = await tx
    .select()
    .from(policyLeases)
    .where(inArray(policyLeases.policyId, [...policyIds]))
    .for('update');
  for (const policyId of policyIds) {
    if (rows.find((row) => row.policyId === policyId)?.owner !== owner)
      throw policyLeaseLost(owner, policyId);
  }
}

function policyLeaseLost(owner: string, policyId: string): StoreError {
  return new StoreError(
    'policy-lease-lost',
    `${owner} does not hold the lease on policy ${policyId}; another trainer is advancing it`,
  );
}
