// The name of the A/B experiment the trainer opens for a new version against its parent (--ab-test).
// Experiment names allow letters, digits, ".", "_" and "-" (db/store/create-experiment.ts), so the
// version's served name (agent@3) is spelled with those: agent-3-vs-parent.

const suffix = '-vs-parent';
/** The longest experiment name the store takes. */
const maxLength = 100;

export function abTestName(adapterName: string): string {
  const stem = adapterName.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return `${(stem || 'version').slice(0, maxLength - suffix.length)}${suffix}`;
}
