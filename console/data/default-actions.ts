// Promote and rollback for the console, under the CLI's rules and through the same Store functions
// (`edgerl ab promote`: promoteArm with promoteWarning's note; `edgerl ab rollback`:
// rollbackDefaultVersion), and what the confirmation page says before either runs.
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { AbArm, AbExperimentView, DefaultChangeRecord, PublicationRow, Store } from '../../db/store.ts';
import type { AbReport } from '../../experiments/ab-report.ts';
import { loadAbReport } from '../../experiments/load-ab-report.ts';
import { promoteWarning } from '../../experiments/promote-warning.ts';
import { StoreError } from '../../db/errors.ts';

export interface PromotePlan {
  readonly view: AbExperimentView;
  readonly report: AbReport;
  readonly arm: AbArm;
  readonly policyName: string;
  readonly current: PolicyVersion | undefined;
  readonly warning: string | undefined;
  readonly replicas: PublicationRow[];
}

/** The arm as `edgerl ab promote NAME ARM` finds it: by arm name, its version's served name, or the version id. */
export function findArm(view: AbExperimentView, ref: string): AbArm {
  const arm = view.arms.find(
    (candidate) =>
      candidate.name === ref || candidate.adapterName === ref || candidate.policyVersionId === ref,
  );
  if (!arm) {
    throw new StoreError(
      'not-found',
      `experiment ${view.experiment.name} has no arm "${ref}"; its arms are ${view.arms.map((candidate) => candidate.name).join(', ')}`,
    );
  }
  return arm;
}

export async function planPromote(store: Store, experiment: string, armRef: string): Promise<PromotePlan> {
  const { view, report } = await loadAbReport(store, experiment);
  const arm = findArm(view, armRef);
  const policy = await store.getPolicy({ policyId: view.experiment.policyId });
  const current = await store.getDefaultVersion({ policyId: policy.id });
  const replicas = await store.listPublications({ versionId: arm.policyVersionId });
  return {
    view,
    report,
    arm,
    policyName: policy.name,
    current,
    warning: promoteWarning(report, arm.name),
    replicas,
  };
}

export async function promote(
  store: Store,
  experiment: string,
  armRef: string,
  fleet: readonly string[] | undefined,
) {
  const view = await store.getAbExperiment(experiment);
  const arm = findArm(view, armRef);
  return store.promoteArm({
    experimentId: view.experiment.id,
    armId: arm.id,
    ...(fleet && fleet.length > 0 ? { fleet: [...fleet] } : {}),
  });
}

export interface RollbackPlan {
  readonly policyName: string;
  readonly current: PolicyVersion | undefined;
  /** The promote a rollback would undo: the newest not undone yet. */
  readonly undo: DefaultChangeRecord | undefined;
}

export async function planRollback(store: Store, policyName: string): Promise<RollbackPlan> {
  const policy = await store.getPolicy({ policyName });
  const current = await store.getDefaultVersion({ policyId: policy.id });
  const lineage = (await store.policyLineage()).find((entry) => entry.policy.id === policy.id);
  const undo = lineage?.defaultChanges.find((change) => change.action === 'promote' && !change.undone);
  return { policyName: policy.name, current, undo };
}

export async function rollback(store: Store, policyName: string, fleet: readonly string[] | undefined) {
  const policy = await store.getPolicy({ policyName });
  return store.rollbackDefaultVersion({
    policyId: policy.id,
    ...(fleet && fleet.length > 0 ? { fleet: [...fleet] } : {}),
  });
}
