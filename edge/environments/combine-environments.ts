// The environments an edge serves: the user's beside the shipped ones. Both stay: the shipped ones are
// what the docs, the demo and smoke tests name, and adding yours should not take them away. A clash is
// refused rather than resolved: a name is stored with every trajectory, and the trainer and the
// console read it as one environment, so two meanings of one name would mix their data.
import type { EnvironmentList, EnvironmentRecord } from './environment-record.ts';
import { environmentRecord } from './environment-record.ts';
import { EnvironmentsError } from './environments-error.ts';
import { environments as shipped } from './environments.ts';

export interface CombineOptions {
  /** Serve the shipped environments too (default true); false serves only yours. */
  readonly shipped?: boolean;
  /** Names the user's environments in messages (default "your environments"). */
  readonly source?: string;
}

export function combineEnvironments(mine: EnvironmentList, options: CombineOptions = {}): EnvironmentRecord {
  const source = options.source ?? 'your environments';
  const own = environmentRecord(mine, source);
  if (options.shipped === false) return own;
  for (const name of Object.keys(own)) {
    if (Object.hasOwn(shipped, name)) {
      throw new EnvironmentsError(
        'name-clash',
        `${source}: "${name}" is the name of a shipped environment; rename yours (names are stored with every trajectory)`,
      );
    }
  }
  return { ...shipped, ...own };
}
