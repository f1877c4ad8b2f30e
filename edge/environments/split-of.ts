// Which split a task belongs to, decided by its id alone, so train, validation and eval never share a
// task however many tasks are drawn and whatever the seed.
import type { TaskSplit } from '../../protocol/statuses.ts';
import { hashString } from './hash-string.ts';

/**
 * The id's hash in thousandths: validation takes the first `validationFraction` of the id space, eval
 * the next `evalFraction`, train the rest. Validation is carved from the low end so that an
 * environment which adds it while keeping `evalFraction + validationFraction` at its old eval share
 * keeps exactly the train tasks it had (multi-hop's warm start and RL rounds are unchanged by it).
 */
export function splitOf(taskId: string, evalFraction: number, validationFraction = 0): TaskSplit {
  if (!(evalFraction > 0 && evalFraction < 1)) {
    throw new RangeError(`evalFraction must be strictly between 0 and 1, got ${evalFraction}`);
  }
  if (!(validationFraction >= 0 && evalFraction + validationFraction < 1)) {
    throw new RangeError(
      `validationFraction must be >= 0 and leave train a share (eval + validation < 1), got ${validationFraction}`,
    );
  }
  const bucket = hashString(taskId) % 1000;
  const validationEnd = Math.round(validationFraction * 1000);
  if (bucket < validationEnd) return 'validation';
  return bucket < validationEnd + Math.round(evalFraction * 1000) ? 'eval' : 'train';
}
