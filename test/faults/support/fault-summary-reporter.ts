// The fault suite's vitest reporter (`npm run test:faults`, after the default one): at the end of the
// run it sums what each fault scenario recorded (fault-outcome.ts, carried on the test's meta), prints
// `faults: N scenarios, L lost turns, D duplicates, K leaks`, writes the same figures as JSON to the file
// EDGERL_FAULT_SUMMARY names (for .ci/run's total), and fails the run on a FAIL line when a scenario
// failed, recorded nothing, or found something. Only tests under test/faults/ count.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import {
  type FaultCase,
  faultSummaryLine,
  faultSummaryProblems,
  summarizeFaultCases,
} from './fault-summary.ts';

const faultFile = /[/\\]test[/\\]faults[/\\][^/\\]+\.test\.ts$/;

export default class FaultSummaryReporter implements Reporter {
  #log: (line: string) => void = (line) => console.log(line);
  #error: (line: string) => void = (line) => console.error(line);

  onInit(vitest: Vitest): void {
    this.#log = (line) => vitest.logger.log(line);
    this.#error = (line) => vitest.logger.error(line);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const cases: FaultCase[] = testModules
      .filter((module) => faultFile.test(module.moduleId))
      .flatMap((module) => [...module.children.allTests()])
      .map((test) => ({ name: test.fullName, state: test.result().state, fault: test.meta().fault }));
    const summary = summarizeFaultCases(cases);
    const target = process.env.EDGERL_FAULT_SUMMARY;
    if (target) {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, `${JSON.stringify(summary, null, 2)}\n`);
    }
    const problems = faultSummaryProblems(summary);
    for (const problem of problems) this.#error(problem);
    if (problems.length > 0) process.exitCode = 1;
    this.#log(faultSummaryLine(summary, { showSkipped: true }));
  }
}
