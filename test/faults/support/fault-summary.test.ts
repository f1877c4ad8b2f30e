// The fault suite's sums and line, on hand-made cases (the reporter and CI's total only do I/O around these).
import { describe, expect, it } from 'vitest';
import {
  faultSummaryLine,
  faultSummaryProblems,
  summarizeFaultCases,
  sumFaultSummaries,
} from './fault-summary.ts';

const clean = { lostTurns: 0, duplicates: 0, leaks: 0 };

describe('the fault summary', () => {
  it('counts passed scenarios, sums their outcomes and says how many were skipped', () => {
    const summary = summarizeFaultCases([
      { name: 'a', state: 'passed', fault: clean },
      { name: 'b', state: 'passed', fault: clean },
      { name: 'c', state: 'skipped', fault: undefined },
    ]);
    expect(summary).toEqual({ scenarios: 2, skipped: 1, failures: [], ...clean });
    expect(faultSummaryLine(summary, { showSkipped: true })).toBe(
      'faults: 2 scenarios, 0 lost turns, 0 duplicates, 0 leaks (1 skipped on this store)',
    );
    expect(faultSummaryLine(summary, { showSkipped: false })).toBe(
      'faults: 2 scenarios, 0 lost turns, 0 duplicates, 0 leaks',
    );
    expect(faultSummaryProblems(summary)).toEqual([]);
  });

  it('names a passed scenario without an outcome, a failed one, and one that found something', () => {
    const summary = summarizeFaultCases([
      { name: 'silent', state: 'passed', fault: undefined },
      { name: 'broken', state: 'failed', fault: clean },
      { name: 'leaky', state: 'passed', fault: { lostTurns: 2, duplicates: 0, leaks: 1 } },
    ]);
    // Only the passed scenario with an outcome is counted: 1 scenario, its 2 lost turns and 1 leak.
    expect(summary).toMatchObject({ scenarios: 1, lostTurns: 2, duplicates: 0, leaks: 1 });
    expect(faultSummaryProblems(summary)).toEqual([
      'FAIL: fault scenario silent (passed but recorded no fault outcome)',
      'FAIL: fault scenario broken (failed)',
      'FAIL: fault scenario leaky (recorded 2 lost turns, 1 leaks)',
      'FAIL: the fault scenarios found 2 lost turns, 1 leaks',
    ]);
  });

  it('sums the runs on both stores into CI’s one line', () => {
    const embedded = summarizeFaultCases([
      { name: 'a', state: 'passed', fault: clean },
      { name: 'server only', state: 'skipped', fault: undefined },
    ]);
    const server = summarizeFaultCases([
      { name: 'a', state: 'passed', fault: clean },
      { name: 'server only', state: 'passed', fault: clean },
    ]);
    const total = sumFaultSummaries([embedded, server]);
    expect(total).toEqual({ scenarios: 3, skipped: 1, failures: [], ...clean });
    expect(faultSummaryLine(total, { showSkipped: false })).toBe(
      'faults: 3 scenarios, 0 lost turns, 0 duplicates, 0 leaks',
    );
  });
});
