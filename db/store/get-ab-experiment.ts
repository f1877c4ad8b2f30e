// Reading an experiment for the A/B commands: by name or id, with its arms in position order (the
// control first) and each arm's version's served name and status.
import { asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { isUuidLike } from '../../protocol/is-uuid-like.ts';
import { StoreError } from '../errors.ts';
import { type ExperimentArm, experimentArms } from '../schema/experiment-arms.ts';
import { type Experiment, experiments } from '../schema/experiments.ts';
import { type PolicyVersion, policyVersions } from '../schema/policies.ts';
import type { StoreDb } from '../store-db.ts';
import { parseInput } from './parse-input.ts';

export interface AbArm extends ExperimentArm {
  readonly adapterName: string;
  readonly versionStatus: PolicyVersion['status'];
}

export interface AbExperimentView {
  readonly experiment: Experiment;
  readonly arms: AbArm[];
}

/** `reference`: the experiment's name, or its id. */
export async function getAbExperiment(db: StoreDb, reference: string): Promise<AbExperimentView> {
  const ref = parseInput(z.string().trim().min(1).max(300), reference, 'experiment');
  const byId = isUuidLike(ref);
  const [experiment] = await db
    .select()
    .from(experiments)
    .where(byId ? eq(experiments.id, ref) : eq(experiments.name, ref));
  if (!experiment) throw new StoreError('not-found', `experiment "${ref}" does not exist`);
  const rows = await db
    .select({
      arm: experimentArms,
      adapterName: policyVersions.adapterName,
      versionStatus: policyVersions.status,
    })
    .from(experimentArms)
    .innerJoin(policyVersions, eq(policyVersions.id, experimentArms.policyVersionId))
    .where(eq(experimentArms.experimentId, experiment.id))
    .orderBy(asc(experimentArms.position), asc(experimentArms.name));
  return {
    experiment,
    arms: rows.map((row) => ({ ...row.arm, adapterName: row.adapterName, versionStatus: row.versionStatus })),
  };
}
