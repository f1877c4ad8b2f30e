// Where the model runtime's committed fixtures live, and a quiet backend switch, for the tests in
// model/, serve/ and test/. Test-only.
import { fileURLToPath } from 'node:url';
import { selectBackend } from '../../model/backend.ts';
import type { BackendChoice } from '../../model/backend-names.ts';

/** test/fixtures/model/<name> (micro checkpoints + references; see its README). */
export function fixtureDir(name: string): string {
  return fileURLToPath(new URL(`../fixtures/model/${name}`, import.meta.url));
}

export async function useBackend(choice: BackendChoice): Promise<void> {
  await selectBackend({ requested: choice, log: () => {} });
}
