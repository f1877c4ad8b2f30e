// What `edgerl ab promote` says when asked to promote an arm the report does not back: people may
// decide against the numbers (a guardrail they know about, a deadline), but they should know.
import type { AbReport } from './ab-report.ts';

/** A warning in plain words, or undefined when the report backs promoting `armName`. */
export function promoteWarning(report: AbReport, armName: string): string | undefined {
  if (!report.enoughData) return 'the report has no verdict yet (not enough data)';
  const control = report.arms[0]?.name;
  if (armName === control) {
    const better = report.comparisons.filter(
      (comparison) => comparison.kind === 'tested' && comparison.significant && comparison.difference > 0,
    );
    return better.length > 0
      ? `the report finds ${better.map((comparison) => comparison.arm).join(', ')} significantly better than ${armName}`
      : undefined;
  }
  const comparison = report.comparisons.find((candidate) => candidate.arm === armName);
  const backed = comparison?.kind === 'tested' && comparison.significant && comparison.difference > 0;
  return backed ? undefined : `the report does not find ${armName} significantly better than ${control}`;
}
