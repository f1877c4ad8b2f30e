// The policies page's data: every policy's version lineage and default history, where each version
// is served (publications), and the experiments each version is an arm of (what promote acts on).
import type { AbExperimentListing, PolicyLineage, PublicationRow, Store } from '../../db/store.ts';

export interface PoliciesView {
  readonly lineages: PolicyLineage[];
  /** By version id. */
  readonly publications: Record<string, PublicationRow[]>;
  readonly experiments: AbExperimentListing[];
}

export async function loadPolicies(store: Store): Promise<PoliciesView> {
  const [lineages, rows, experiments] = await Promise.all([
    store.policyLineage(),
    store.listPublications(),
    store.listAbExperiments(),
  ]);
  const publications: Record<string, PublicationRow[]> = {};
  for (const row of rows) {
    publications[row.policyVersionId] = [...(publications[row.policyVersionId] ?? []), row];
  }
  return { lineages, publications, experiments };
}
