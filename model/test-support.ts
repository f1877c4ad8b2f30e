// Helpers shared by this folder's tests: where the committed fixtures live, a quiet backend switch,
// and the largest absolute difference between two arrays. Test-only; nothing else imports it.
import { fileURLToPath } from 'node:url';
import { type BackendChoice, selectBackend } from './backend.ts';

/** test/fixtures/model/<name> (micro checkpoints + references; see its README). */
export function fixtureDir(name: string): string {
  return fileURLToPath(new URL(`../test/fixtures/model/${name}`, import.meta.url));
}

export async function useBackend(choice: BackendChoice): Promise<void> {
  await selectBackend({ requested: choice, log: () => {} });
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError(`length ${a.length} vs ${b.length}`);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs((a[i] as number) - (b[i] as number)));
  return max;
}
