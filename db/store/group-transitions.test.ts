import { describe, expect, it } from 'vitest';
import {
  canMoveGroup,
  claimableStatuses,
  scorableStatuses,
  statusesThatMayBecome,
} from './group-transitions.ts';

describe('group statuses that follow from the transition table', () => {
  it('lets a judging start from complete, scored (a re-judging) and unscored (a retry)', () => {
    expect(scorableStatuses).toEqual(['complete', 'scored', 'unscored']);
    for (const status of scorableStatuses) expect(canMoveGroup(status, 'scored')).toBe(true);
  });

  it('lets a trainer claim complete (to score and train) and scored groups, never unscored ones', () => {
    expect(claimableStatuses).toEqual(['complete', 'scored']);
    expect(canMoveGroup('unscored', 'trained')).toBe(false);
  });

  it('names a status nothing may become', () => {
    expect(statusesThatMayBecome('failed')).toEqual(['running', 'complete', 'scored', 'unscored']);
    expect(() => statusesThatMayBecome('running')).toThrow(/no group status may become running/);
  });
});
