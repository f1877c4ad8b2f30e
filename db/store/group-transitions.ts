// Which group status may follow which: one table, checked by every function that moves a group.
// `scored` never falls back to `unscored` (a failed re-judging keeps the earlier scores); `trained` and
// `failed` are final.
import type { GroupStatus } from '../../protocol/statuses.ts';
import { StoreError } from '../errors.ts';

export const groupTransitions = {
  running: ['complete', 'failed'],
  complete: ['scored', 'unscored', 'trained', 'failed'],
  scored: ['scored', 'trained', 'failed'],
  unscored: ['scored', 'unscored', 'failed'],
  trained: [],
  failed: [],
} as const satisfies Record<GroupStatus, readonly GroupStatus[]>;

export function canMoveGroup(from: GroupStatus, to: GroupStatus): boolean {
  return (groupTransitions[from] as readonly GroupStatus[]).includes(to);
}

export function assertGroupMove(groupId: string, from: GroupStatus, to: GroupStatus): void {
  if (!canMoveGroup(from, to)) {
    throw new StoreError('conflict', `group ${groupId} is ${from}; it cannot become ${to}`);
  }
}
