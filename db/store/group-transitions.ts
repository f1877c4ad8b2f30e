// Which group status may follow which: one table, checked by every function that moves a group.
// `scored` never falls back to `unscored` (a failed re-judging keeps the earlier scores); `trained` and
// `failed` are final. Which groups may be judged or claimed for training follows from the table.
import { type GroupStatus, groupStatuses } from '../../protocol/statuses.ts';
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

/** Every status a group may move to `to` from, in `groupStatuses` order. */
export function statusesThatMayBecome(to: GroupStatus): [GroupStatus, ...GroupStatus[]] {
  const from = groupStatuses.filter((status) => canMoveGroup(status, to));
  const [first, ...rest] = from;
  if (first === undefined) throw new Error(`no group status may become ${to}`);
  return [first, ...rest];
}

/** Groups a judging may start from (`edgerl score`, the trainer's RULER step): complete, scored, unscored. */
export const scorableStatuses = statusesThatMayBecome('scored');

/** Groups a trainer may claim: those that may still become `trained` (complete, scored). */
export const claimableStatuses = statusesThatMayBecome('trained');
