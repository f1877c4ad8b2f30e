// A route written to a trajectory or group row reads back as the same route, and the caller's own
// metadata keys cannot break the reading.
import { describe, expect, it } from 'vitest';
import { groupRouteFields, type Route, recordedRoute, trajectoryRouteFields } from './route.ts';

const armRoute: Route = {
  model: 'agent@4',
  policyVersionId: '00000000-0000-4000-8000-000000000001',
  experimentId: '00000000-0000-4000-8000-000000000002',
  experimentArmId: '00000000-0000-4000-8000-000000000003',
  armName: 'treatment',
};

/** A stored row as the store would return it for the given start fields. */
function row(fields: { policyVersionId?: string; metadata: Record<string, unknown> }, arm: string | null) {
  return { policyVersionId: fields.policyVersionId ?? null, experimentArmId: arm, metadata: fields.metadata };
}

describe('recorded routes', () => {
  it('reads back from a trajectory what it wrote, but the experiment id (a trajectory has no column for it)', () => {
    const fields = trajectoryRouteFields(armRoute);
    expect(fields.metadata).toEqual({ model: 'agent@4', arm: 'treatment' });
    const { experimentId: _, ...withoutExperiment } = armRoute;
    expect(recordedRoute(row(fields, armRoute.experimentArmId ?? null))).toEqual(withoutExperiment);
  });

  it('reads back from a group all of the route, the arm id from its metadata', () => {
    const fields = groupRouteFields(armRoute);
    expect(fields).toEqual({
      policyVersionId: armRoute.policyVersionId,
      experimentId: armRoute.experimentId,
      metadata: { model: 'agent@4', arm: 'treatment', armId: armRoute.experimentArmId },
    });
    expect(
      recordedRoute({
        policyVersionId: fields.policyVersionId ?? null,
        experimentId: fields.experimentId ?? null,
        metadata: fields.metadata,
      }),
    ).toEqual(armRoute);
  });

  it('records a plain served model with no ids, and reads no route where none was recorded', () => {
    const fields = trajectoryRouteFields({ model: 'gpt-x' });
    expect(fields).toEqual({ metadata: { model: 'gpt-x' } });
    expect(recordedRoute(row(fields, null))).toEqual({ model: 'gpt-x' });
    expect(recordedRoute(row({ metadata: { user: 'u1' } }, null))).toBeUndefined();
    // The caller's own `arm` and `armId` keys (not the edge's) are ignored, not fatal.
    expect(recordedRoute(row({ metadata: { model: 'gpt-x', arm: 7, armId: 'x' } }, null))).toEqual({
      model: 'gpt-x',
    });
  });
});
