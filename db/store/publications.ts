// Fleet publication rows (db/schema/publications.ts): record a version's state on one replica, read
// them back (per version, replica or policy), and answer the edge's question "which replicas serve
// this model name". The commit that turns `verified` rows `ready` together with publishing the version
// is commitTrainingCycle's (training-cycle.ts); the rule that a default must be ready somewhere is
// setDefaultVersion's (default-version.ts). Leaves out talking to replicas (trainer/train/).
import { and, asc, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import { isBaseVersion } from '../../protocol/base-version.ts';
import { replicaName } from '../../protocol/replica-url.ts';
import { publicationStates } from '../../protocol/statuses.ts';
import { StoreError } from '../errors.ts';
import { policies, type PolicyVersion, policyVersions } from '../schema/policies.ts';
import { type Publication, publications } from '../schema/publications.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const replica = z.string().min(1).max(2000).transform(replicaName);

const recordPublicationSchema = z.object({
  versionId: id,
  replica,
  state: z.enum(publicationStates),
  /** Why this phase failed here (with state `quarantined`), or a note on a recovery; kept as `last_error`. */
  error: z.string().min(1).max(2000).optional(),
  /** This write starts a load on the replica (prepare or catch-up): `attempts` counts it. */
  attempt: z.boolean().default(false),
});
export type RecordPublicationInput = z.input<typeof recordPublicationSchema>;

/**
 * Writes one (version, replica) row's state, creating it on first use. `ready` is only for a version
 * that is already `published` (a catch-up); a new version's rows become ready in its commit.
 */
export async function recordPublication(db: StoreDb, input: RecordPublicationInput): Promise<Publication> {
  const write = parseInput(recordPublicationSchema, input, 'recordPublication');
  return db.transaction(async (tx) => {
    const [version] = await tx
      .select({ status: policyVersions.status, adapterName: policyVersions.adapterName })
      .from(policyVersions)
      .where(eq(policyVersions.id, write.versionId));
    if (!version) throw new StoreError('not-found', `policy version ${write.versionId} does not exist`);
    if (write.state === 'ready' && version.status !== 'published') {
      throw new StoreError(
        'conflict',
        `${version.adapterName} is ${version.status}: its replicas become ready when it is committed`,
      );
    }
    const attempts = write.attempt ? 1 : 0;
    const readyAt = write.state === 'ready' ? sql`now()` : null;
    const [row] = await tx
      .insert(publications)
      .values({
        policyVersionId: write.versionId,
        replica: write.replica,
        state: write.state,
        attempts,
        lastError: write.error ?? null,
        readyAt,
      })
      .onConflictDoUpdate({
        target: [publications.policyVersionId, publications.replica],
        set: {
          state: write.state,
          attempts: sql`${publications.attempts} + ${attempts}`,
          lastError: write.error ?? sql`${publications.lastError}`,
          readyAt: write.state === 'ready' ? sql`now()` : sql`${publications.readyAt}`,
          updatedAt: sql`now()`,
        },
      })
      .returning();
    if (!row) throw new Error('upsert returned no row');
    return row;
  });
}

const listPublicationsSchema = z.object({
  versionId: id.optional(),
  policyId: id.optional(),
  replica: replica.optional(),
});
export type ListPublicationsInput = z.input<typeof listPublicationsSchema>;

export interface PublicationRow extends Publication {
  readonly adapterName: string;
}

/** Publication rows with their version's adapter name, by version then replica; filters are ANDed. */
export async function listPublications(
  db: StoreDb,
  input: ListPublicationsInput = {},
): Promise<PublicationRow[]> {
  const filter = parseInput(listPublicationsSchema, input, 'listPublications');
  const conditions = [
    filter.versionId ? eq(publications.policyVersionId, filter.versionId) : undefined,
    filter.policyId ? eq(policyVersions.policyId, filter.policyId) : undefined,
    filter.replica ? eq(publications.replica, filter.replica) : undefined,
  ].filter((condition) => condition !== undefined);
  const rows = await db
    .select({ publication: publications, adapterName: policyVersions.adapterName })
    .from(publications)
    .innerJoin(policyVersions, eq(policyVersions.id, publications.policyVersionId))
    .where(conditions.length > 0 ? and(...conditions) : undefined)
    .orderBy(asc(policyVersions.policyId), asc(policyVersions.version), asc(publications.replica));
  return rows.map((row) => ({ ...row.publication, adapterName: row.adapterName }));
}

const servableVersionsSchema = z.object({ policyName: z.string().min(1).max(100).optional() });
export type ServableVersionsInput = z.input<typeof servableVersionsSchema>;

/**
 * The versions every replica should hold: `published` (not retired) versions that have an adapter
 * (the base version is the base weights, served everywhere already), of one policy or of all, in
 * version order. What a catch-up loads onto a replica that lacks them.
 */
export async function servableVersions(
  db: StoreDb,
  input: ServableVersionsInput = {},
): Promise<PolicyVersion[]> {
  const filter = parseInput(servableVersionsSchema, input, 'servableVersions');
  const rows = await db
    .select({ version: policyVersions })
    .from(policyVersions)
    .innerJoin(policies, eq(policies.id, policyVersions.policyId))
    .where(
      and(
        eq(policyVersions.status, 'published'),
        isNotNull(policyVersions.adapterUri),
        filter.policyName ? eq(policies.name, filter.policyName) : undefined,
      ),
    )
    .orderBy(asc(policies.name), asc(policyVersions.version));
  return rows.map((row) => row.version).filter((version) => !isBaseVersion(version));
}

/**
 * Which replicas a request for `modelName` may go to. `adapter`: the name is a trained version's
 * adapter, served only where its row is `ready` (the list may be empty: no replica holds it). `any`:
 * the store knows no adapter of that name (a base model's name, or a model the operator serves
 * himself): every replica serves it.
 */
export type ServingReplicas =
  | { readonly kind: 'adapter'; readonly versionId: string; readonly ready: readonly string[] }
  | { readonly kind: 'any' };

export async function servingReplicas(db: StoreDb, modelName: string): Promise<ServingReplicas> {
  const name = parseInput(z.string().min(1).max(300), modelName, 'modelName');
  // One round trip: the version and its ready rows (none: one row with a null replica).
  const rows = await db
    .select({
      id: policyVersions.id,
      version: policyVersions.version,
      adapterUri: policyVersions.adapterUri,
      trainingRunId: policyVersions.trainingRunId,
      replica: publications.replica,
    })
    .from(policyVersions)
    .leftJoin(
      publications,
      and(eq(publications.policyVersionId, policyVersions.id), eq(publications.state, 'ready')),
    )
    .where(eq(policyVersions.adapterName, name))
    .orderBy(asc(publications.replica));
  const [first] = rows;
  if (!first || isBaseVersion(first)) return { kind: 'any' };
  return {
    kind: 'adapter',
    versionId: first.id,
    ready: rows.flatMap((row) => (row.replica === null ? [] : [row.replica])),
  };
}

/**
 * Inside a commit: the named replicas' rows of `versionId` that verified it become `ready`. Returns
 * the replicas it turned ready; a replica whose row is not `verified` (or `ready`) is left alone.
 */
export async function commitPublications(
  tx: StoreDb,
  versionId: string,
  replicas: readonly string[],
): Promise<string[]> {
  if (replicas.length === 0) return [];
  const names = replicas.map(replicaName);
  const rows = await tx
    .update(publications)
    .set({ state: 'ready', readyAt: sql`now()`, updatedAt: sql`now()` })
    .where(
      and(
        eq(publications.policyVersionId, versionId),
        inArray(publications.replica, names),
        inArray(publications.state, ['verified', 'ready']),
      ),
    )
    .returning({ replica: publications.replica });
  return rows.map((row) => row.replica);
}

/**
 * Whether `version` may take a policy's default traffic on the fleet: the base version always; a
 * trained one when some replica (of `fleet`, when given) has it `ready`. A version without any
 * publication row was published before fleet publication was recorded, or by hand: without a
 * `fleet` it passes (nothing says where it is served); with one it does not.
 */
export async function readyOnFleet(
  tx: StoreDb,
  version: PolicyVersion,
  fleet: readonly string[] | undefined,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (isBaseVersion(version)) return { ok: true };
  const rows = await tx
    .select({ replica: publications.replica, state: publications.state })
    .from(publications)
    .where(eq(publications.policyVersionId, version.id));
  const names = fleet?.map(replicaName);
  if (rows.length === 0 && names === undefined) return { ok: true };
  const counted = names ? rows.filter((row) => names.includes(row.replica)) : rows;
  if (counted.some((row) => row.state === 'ready')) return { ok: true };
  const states = counted.map((row) => `${row.replica} ${row.state}`).join(', ') || 'none';
  return {
    ok: false,
    reason: `${version.adapterName} is ready on no replica${names ? ' of the fleet' : ''} (${states}); run edgerl fleet catch-up first`,
  };
}
