// The verdict of an A/B report in plain words: "not enough data yet" until every arm has the sample
// size, then one sentence per comparison with the control and which arm to keep or promote.
import type { AbArmReport, AbComparison, AbReportInput } from './ab-report.ts';
import { formatP } from './format-numbers.ts';
import type { MetricTest } from './metric-tests.ts';

export function waitingVerdict(
  experiment: AbReportInput['experiment'],
  arms: readonly AbArmReport[],
): string[] {
  const short = arms
    .filter((arm) => arm.samplesNeeded > 0)
    .map((arm) => `${arm.name} has ${arm.rewarded}`)
    .join(', ');
  return [
    `Not enough data yet: each arm needs ${experiment.minSamples} rewarded trajectories and ${short}.`,
    experiment.status === 'running'
      ? 'Keep the experiment running; the verdict appears once every arm has reached the sample size.'
      : 'The experiment is stopped; run a new one to collect more data.',
  ];
}

export function abVerdict(
  experimentName: string,
  controlName: string,
  comparisons: readonly AbComparison[],
  metricTest: MetricTest,
  confidence: number,
): string[] {
  const level = `${(confidence * 100).toFixed(0)}%`;
  const lines = comparisons.map((comparison) => {
    if (comparison.kind === 'untested') {
      return `${comparison.arm} cannot be compared with ${controlName} yet: ${comparison.reason}.`;
    }
    const format = metricTest.formatDifference;
    const numbers = `${metricTest.label} ${format(comparison.difference)} (${level} CI ${format(
      comparison.ci[0],
    )} to ${format(comparison.ci[1])}, p ${formatP(comparison.adjustedPValue)})`;
    if (!comparison.significant) {
      return `No significant difference between ${comparison.arm} and ${controlName}: ${numbers}.`;
    }
    return comparison.difference > 0
      ? `${comparison.arm} is better than ${controlName}: ${numbers}.`
      : `${comparison.arm} is worse than ${controlName}: ${numbers}.`;
  });
  const winners = comparisons
    .filter(
      (comparison) => comparison.kind === 'tested' && comparison.significant && comparison.difference > 0,
    )
    .sort((a, b) => (b.kind === 'tested' ? b.difference : 0) - (a.kind === 'tested' ? a.difference : 0));
  const best = winners[0];
  if (best) {
    lines.push(`Promote ${best.arm}: edgerl ab promote ${experimentName} ${best.arm}`);
  } else {
    lines.push(`Keep ${controlName}: no arm did significantly better.`);
  }
  return lines;
}
