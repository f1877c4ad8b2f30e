// Which split a task belongs to, decided by its id alone, so train and eval never share a task
// however many tasks are drawn and whatever the seed.
import type { TaskSplit } from '../../protocol/statuses.ts';
import { hashString } from './hash-string.ts';

/** Eval takes `evalFraction` of the id space (in thousandths); the rest is train. */
export function splitOf(taskId: string, evalFraction: number): TaskSplit {
  if (!(evalFraction > 0 && evalFraction < 1)) {
    throw new RangeError(`evalFraction must be strictly between 0 and 1, got ${evalFraction}`);
  }
  return hashString(taskId) % 1000 < Math.round(evalFraction * 1000) ? 'eval' : 'train';
}
