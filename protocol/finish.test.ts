// The end-reason rule, case by case: the table every finish (API, store, episode sink) goes through.
import { describe, expect, it } from 'vitest';
import { endReasonIssue, endStatuses } from './finish.ts';
import { trajectoryStatuses } from './statuses.ts';

describe('finishing a trajectory', () => {
  it('ends in every status but running', () => {
    expect([...endStatuses].sort()).toEqual(
      trajectoryStatuses.filter((status) => status !== 'running').sort(),
    );
  });

  it('wants a reason for error, allows one for truncated, and refuses one for finished', () => {
    expect(endReasonIssue('error', undefined)).toBe('required when status is "error"');
    expect(endReasonIssue('error', '')).toBe('required when status is "error"');
    expect(endReasonIssue('error', 'policy down')).toBeUndefined();
    expect(endReasonIssue('truncated', undefined)).toBeUndefined();
    expect(endReasonIssue('truncated', 'max-turns')).toBeUndefined();
    expect(endReasonIssue('finished', undefined)).toBeUndefined();
    expect(endReasonIssue('finished', 'done')).toBe('only for status "error" or "truncated"');
  });
});
