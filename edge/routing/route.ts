// A route: the served model a trajectory asks for and the version and experiment arm it records.
// Written to a row and read back here only: the ids go to the row's columns, the names with no
// column (the served model, the arm's name) to its metadata. Resolving one is resolve-route.ts.
import { z } from 'zod';

export interface Route {
  /** What goes into the inference request's `model`. */
  readonly model: string;
  readonly policyVersionId?: string;
  readonly experimentId?: string;
  readonly experimentArmId?: string;
  readonly armName?: string;
}

/**
 * The part of a route kept in metadata (`armId` only on groups, which have no arm column). Metadata
 * also holds the caller's own keys, so a stray `arm` or `armId` there is ignored rather than fatal.
 */
const routeMetadataSchema = z.object({
  model: z.string().min(1),
  arm: z.string().min(1).optional().catch(undefined),
  armId: z.uuid().optional().catch(undefined),
});

/** The columns of a trajectory row that hold its route. */
export interface TrajectoryRouteRow {
  readonly policyVersionId: string | null;
  readonly experimentArmId: string | null;
  readonly metadata: Record<string, unknown>;
}
/** The columns of a group row that hold its route: no arm column (its metadata has the arm's id). */
export interface GroupRouteRow {
  readonly policyVersionId: string | null;
  readonly experimentId: string | null;
  readonly metadata: Record<string, unknown>;
}

/** What startTrajectory records of a route. */
export function trajectoryRouteFields(route: Route) {
  return {
    ...(route.policyVersionId ? { policyVersionId: route.policyVersionId } : {}),
    ...(route.experimentArmId ? { experimentArmId: route.experimentArmId } : {}),
    metadata: { model: route.model, ...(route.armName ? { arm: route.armName } : {}) },
  };
}

/** What createGroup records of a route, for the members that join the group later. */
export function groupRouteFields(route: Route) {
  return {
    ...(route.policyVersionId ? { policyVersionId: route.policyVersionId } : {}),
    ...(route.experimentId ? { experimentId: route.experimentId } : {}),
    metadata: {
      model: route.model,
      ...(route.armName ? { arm: route.armName, armId: route.experimentArmId } : {}),
    },
  };
}

/** The route a trajectory or group recorded when it started; undefined when it recorded none. */
export function recordedRoute(row: TrajectoryRouteRow | GroupRouteRow): Route | undefined {
  const names = routeMetadataSchema.safeParse(row.metadata);
  if (!names.success) return undefined;
  const armId = 'experimentArmId' in row ? row.experimentArmId : names.data.armId;
  return {
    model: names.data.model,
    ...(row.policyVersionId ? { policyVersionId: row.policyVersionId } : {}),
    ...('experimentId' in row && row.experimentId ? { experimentId: row.experimentId } : {}),
    ...(armId ? { experimentArmId: armId } : {}),
    ...(names.data.arm ? { armName: names.data.arm } : {}),
  };
}
