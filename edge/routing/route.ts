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

interface RouteRow {
  readonly policyVersionId: string | null;
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

/** The route a trajectory recorded when it started; undefined when it recorded none. */
export function trajectoryRoute(
  row: RouteRow & { readonly experimentArmId: string | null },
): Route | undefined {
  const names = routeMetadataSchema.safeParse(row.metadata);
  if (!names.success) return undefined;
  return {
    model: names.data.model,
    ...(row.policyVersionId ? { policyVersionId: row.policyVersionId } : {}),
    ...(row.experimentArmId ? { experimentArmId: row.experimentArmId } : {}),
    ...(names.data.arm ? { armName: names.data.arm } : {}),
  };
}

/** The route a group recorded at creation (every member shares it); undefined when it recorded none. */
export function groupRoute(row: RouteRow & { readonly experimentId: string | null }): Route | undefined {
  const names = routeMetadataSchema.safeParse(row.metadata);
  if (!names.success) return undefined;
  return {
    model: names.data.model,
    ...(row.policyVersionId ? { policyVersionId: row.policyVersionId } : {}),
    ...(row.experimentId ? { experimentId: row.experimentId } : {}),
    ...(names.data.armId ? { experimentArmId: names.data.armId } : {}),
    ...(names.data.arm ? { armName: names.data.arm } : {}),
  };
}
