// Which arms of a new experiment no replica serves right now. Retention (trainer/train/retain-adapters.ts)
// unloads versions that were not routable and removes their publication rows; an experiment made later
// routes to them at once, and every episode of such an arm gets the endpoint's 404 until a catch-up
// loads them again. Pure: the arms' versions and their policies' publication rows in, the versions to
// warn about out. A policy without any publication row is not served by a fleet edgerl tracks (one
// endpoint, no catch-up): nothing to say about it.
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { PublicationRow } from '../../db/store.ts';
import { isBaseVersion } from '../../protocol/base-version.ts';

export function unservedArms(
  versions: readonly PolicyVersion[],
  rowsByPolicy: ReadonlyMap<string, readonly PublicationRow[]>,
): PolicyVersion[] {
  return versions.filter((version) => {
    const rows = rowsByPolicy.get(version.policyId) ?? [];
    return (
      !isBaseVersion(version) &&
      rows.length > 0 &&
      !rows.some((row) => row.policyVersionId === version.id && row.state === 'ready')
    );
  });
}
