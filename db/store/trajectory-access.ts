// Who is writing a trajectory, as the store's append and finish statements check it (docs/edge.md,
// "Who writes a trajectory"): the condition each statement adds to the UPDATE that writes the row, and
// the typed error that explains a refusal. The check lives here, in the statement that writes, so no
// route can skip it; the routes only map the errors. Deliberately leaves out how a key is made or
// presented (protocol/trajectory-key.ts, the edge's routes).
import { type SQL, sql } from 'drizzle-orm';
import type { TrajectoryWriter } from '../../protocol/trajectory-writer.ts';
import { StoreError } from '../errors.ts';

/**
 * The writer a call acts as: a rollout `runner` (with its name when it holds the lease; without one
 * when the edge ends a slot no runner could run), or a proxy `client` with the digest of the trajectory
 * key it presented (absent: none presented, which only a keyless row opened before keys accepts).
 */
export type TrajectoryAccess =
  | { readonly writer: 'runner'; readonly runner?: string }
  | { readonly writer: 'client'; readonly keyDigest?: string };

/** A client's trajectory key, as the digest of it the store compares (appendTurns' last argument). */
export interface ClientKey {
  readonly keyDigest: string;
}

/** ` and …`: the condition on the trajectories row (its columns unqualified or under `alias`) a write needs. */
export function accessCondition(access: TrajectoryAccess, alias?: string): SQL {
  const column = (name: string) => sql.raw(alias ? `${alias}.${name}` : name);
  if (access.writer === 'runner') {
    const held = access.runner !== undefined ? sql` and ${column('runner')} = ${access.runner}::text` : sql``;
    return sql` and ${column('writer')} = 'runner'${held}`;
  }
  return sql` and ${column('writer')} = 'client' and (${column('key_digest')} is null or ${column('key_digest')} = ${access.keyDigest ?? null}::text)`;
}

/** The refusal a row's writer and key digest give this access, or undefined when they allow it. */
export function accessRefusal(
  row: { readonly writer: TrajectoryWriter; readonly keyDigest: string | null },
  access: TrajectoryAccess,
  trajectoryId: string,
): StoreError | undefined {
  if (row.writer !== access.writer) return ownedError(row.writer, trajectoryId);
  if (access.writer === 'client' && row.keyDigest !== null && row.keyDigest !== access.keyDigest) {
    return new StoreError(
      'trajectory-key',
      `trajectory ${trajectoryId} is written only with its trajectory key: ${
        access.keyDigest === undefined ? 'none was given' : 'the key given is not its key'
      }. Send the key POST /v1/trajectories returned as the x-edgerl-trajectory header, or use its baseURL (/t/<key>/v1)`,
    );
  }
  return undefined;
}

function ownedError(writer: TrajectoryWriter, trajectoryId: string): StoreError {
  const why = {
    runner: 'is written only by its rollout runner',
    client: 'is written only by the client that opened it (with its trajectory key)',
    ingest: 'was stored whole by an upload and is never written again',
  } satisfies Record<TrajectoryWriter, string>;
  return new StoreError(
    'trajectory-owned',
    `trajectory ${trajectoryId} ${why[writer]}; to record your own agent, open a trajectory with POST /v1/trajectories`,
  );
}
