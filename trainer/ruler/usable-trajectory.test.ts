import { describe, expect, it } from 'vitest';
import { trajectoryStatuses } from '../../protocol/statuses.ts';
import { isUsableTrajectory } from './usable-trajectory.ts';

describe('isUsableTrajectory', () => {
  it('keeps finished and truncated trajectories with turns, and nothing else', () => {
    const oneTurn = [{}];
    const usable = trajectoryStatuses.filter((status) => isUsableTrajectory({ status, turns: oneTurn }));
    expect(usable).toEqual(['finished', 'truncated']);
    for (const status of trajectoryStatuses) {
      expect(isUsableTrajectory({ status, turns: [] })).toBe(false);
      expect(isUsableTrajectory({ status })).toBe(false); // turns not loaded, or none
    }
  });
});
