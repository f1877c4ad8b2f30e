// CI's last line (.ci/run): reads the JSON summaries the fault suite's reporter wrote (one per store,
// paths as arguments) and prints their sum, `faults: N scenarios, 0 lost turns, 0 duplicates, 0 leaks`.
// Exits 1 with a FAIL line when a summary is missing or unreadable, or any run found something.
// Usage: npx tsx test/faults/support/print-fault-total.ts SUMMARY.json…
import { readFileSync } from 'node:fs';
import { errorMessage } from '../../../protocol/error-message.ts';
import {
  type FaultSummary,
  faultSummaryLine,
  faultSummaryProblems,
  faultSummarySchema,
  sumFaultSummaries,
} from './fault-summary.ts';

function readSummary(path: string): FaultSummary | string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return `FAIL: no fault summary at ${path} (did the fault suite run?): ${errorMessage(error)}`;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return `FAIL: the fault summary ${path} is not JSON`;
  }
  const parsed = faultSummarySchema.safeParse(json);
  return parsed.success
    ? parsed.data
    : `FAIL: the fault summary ${path} is not a summary: ${parsed.error.message}`;
}

const paths = process.argv.slice(2);
if (paths.length === 0) {
  console.error('FAIL: usage: print-fault-total.ts SUMMARY.json…');
  process.exit(1);
}
const read = paths.map(readSummary);
const unreadable = read.filter((entry): entry is string => typeof entry === 'string');
const total = sumFaultSummaries(read.filter((entry): entry is FaultSummary => typeof entry !== 'string'));
const problems = [...unreadable, ...faultSummaryProblems(total)];
for (const problem of problems) console.error(problem);
console.log(faultSummaryLine(total, { showSkipped: false }));
process.exit(problems.length > 0 ? 1 : 0);
