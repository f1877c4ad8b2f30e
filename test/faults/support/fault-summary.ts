// The fault suite's figures: what one run's scenarios recorded (summed by the reporter), the JSON it
// writes for CI, the sum over several runs (embedded store + server), and the line that says it.
// Pure: no vitest, no files; the reporter and the CI script do the I/O.
import { z } from 'zod';
import type { FaultOutcome } from './fault-outcome.ts';

export const faultSummarySchema = z.object({
  /** Fault tests that passed (each recorded its outcome). */
  scenarios: z.number().int().nonnegative(),
  /** Fault tests skipped on this store (e.g. the ones that need a Postgres server). */
  skipped: z.number().int().nonnegative(),
  /** Fault tests that failed, or passed without recording an outcome, by full name. */
  failures: z.array(z.string()),
  lostTurns: z.number().int().nonnegative(),
  duplicates: z.number().int().nonnegative(),
  leaks: z.number().int().nonnegative(),
});
export type FaultSummary = z.infer<typeof faultSummarySchema>;

/** One fault test as the reporter saw it at the end of the run. */
export interface FaultCase {
  readonly name: string;
  readonly state: 'passed' | 'failed' | 'skipped' | 'pending';
  readonly fault: FaultOutcome | undefined;
}

const countLabels = {
  lostTurns: 'lost turns',
  duplicates: 'duplicates',
  leaks: 'leaks',
} as const satisfies Record<keyof FaultOutcome, string>;
const counts = Object.keys(countLabels) as (keyof FaultOutcome)[];

/** `2 lost turns, 1 leaks`: the non-zero counts of an outcome, or '' when all are 0. */
function nonZero(outcome: FaultOutcome): string {
  return counts
    .filter((key) => outcome[key] !== 0)
    .map((key) => `${outcome[key]} ${countLabels[key]}`)
    .join(', ');
}

/**
 * Sums the passed cases. A failed or unfinished case, a passed one without an outcome, and one that
 * recorded a non-zero count (its own assertions should have failed it) are failures, by name.
 */
export function summarizeFaultCases(cases: readonly FaultCase[]): FaultSummary {
  const summary = {
    scenarios: 0,
    skipped: 0,
    failures: [] as string[],
    lostTurns: 0,
    duplicates: 0,
    leaks: 0,
  };
  for (const test of cases) {
    if (test.state === 'skipped') summary.skipped += 1;
    else if (test.state !== 'passed') summary.failures.push(`${test.name} (${test.state})`);
    else if (!test.fault) summary.failures.push(`${test.name} (passed but recorded no fault outcome)`);
    else {
      summary.scenarios += 1;
      for (const key of counts) summary[key] += test.fault[key];
      const found = nonZero(test.fault);
      if (found) summary.failures.push(`${test.name} (recorded ${found})`);
    }
  }
  return summary;
}

export function sumFaultSummaries(summaries: readonly FaultSummary[]): FaultSummary {
  return summaries.reduce<FaultSummary>(
    (total, one) => ({
      scenarios: total.scenarios + one.scenarios,
      skipped: total.skipped + one.skipped,
      failures: [...total.failures, ...one.failures],
      lostTurns: total.lostTurns + one.lostTurns,
      duplicates: total.duplicates + one.duplicates,
      leaks: total.leaks + one.leaks,
    }),
    { scenarios: 0, skipped: 0, failures: [], lostTurns: 0, duplicates: 0, leaks: 0 },
  );
}

/** `faults: N scenarios, L lost turns, D duplicates, K leaks`, plus how many were skipped when asked. */
export function faultSummaryLine(summary: FaultSummary, options: { showSkipped: boolean }): string {
  const line = `faults: ${summary.scenarios} scenarios, ${summary.lostTurns} lost turns, ${summary.duplicates} duplicates, ${summary.leaks} leaks`;
  return options.showSkipped && summary.skipped > 0
    ? `${line} (${summary.skipped} skipped on this store)`
    : line;
}

/** What makes the run fail, one `FAIL:` line each: every failure by name, then non-zero totals. */
export function faultSummaryProblems(summary: FaultSummary): string[] {
  const problems = summary.failures.map((failure) => `FAIL: fault scenario ${failure}`);
  const found = nonZero(summary);
  if (found) problems.push(`FAIL: the fault scenarios found ${found}`);
  return problems;
}
