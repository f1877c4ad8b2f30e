// The A/B report as text for a terminal: a header, one row per arm, one row per comparison with the
// control, then the verdict and notes. `edgerl ab report --json` prints the report object instead.
import type { AbReport, AbTest } from './ab-report.ts';
import { formatP, percent, signed } from './format-numbers.ts';

const testNames = {
  'welch-t': "Welch's t-test",
  'two-proportion-z': 'two-proportion z-test',
} satisfies Record<AbTest, string>;

export function formatAbReport(report: AbReport): string {
  const { experiment } = report;
  const level = `${Math.round(report.confidence * 100)}%`;
  const header = `Experiment ${experiment.name}: ${experiment.status}, metric ${experiment.metric} (${testNames[report.test]}), verdict after ${experiment.minSamples} rewarded trajectories per arm`;

  const armRows = [
    [
      'arm',
      'weight',
      'share',
      'ended',
      'rewarded',
      `mean reward [${level} CI]`,
      `success [${level} CI]`,
      'errors',
      'truncated',
      'turns',
      'latency ms',
    ],
    ...report.arms.map((arm) => [
      arm.control ? `${arm.name} (control)` : arm.name,
      percent(arm.weight),
      arm.observedShare === null ? '–' : percent(arm.observedShare),
      String(arm.ended),
      String(arm.rewarded),
      Number.isNaN(arm.reward.mean)
        ? '–'
        : `${arm.reward.mean.toFixed(3)} [${interval(arm.reward.ci, (value) => value.toFixed(3))}]`,
      arm.success ? `${percent(arm.success.rate)} [${interval(arm.success.ci, percent)}]` : '–',
      arm.errorRate === null ? '–' : percent(arm.errorRate),
      arm.truncationRate === null ? '–' : percent(arm.truncationRate),
      arm.turnCountMean === null ? '–' : arm.turnCountMean.toFixed(1),
      arm.latencyMsMean === null ? '–' : arm.latencyMsMean.toFixed(0),
    ]),
  ];

  const control = report.arms[0]?.name ?? '';
  const pHeader = report.correction === 'holm' ? 'p (Holm)' : 'p';
  const comparisonRows = [
    [`vs ${control}`, `difference [${level} CI]`, pHeader, 'significant', 'test'],
    ...report.comparisons.map((comparison) => {
      if (comparison.kind === 'untested') return [comparison.arm, '–', '–', '–', comparison.reason];
      const scale =
        comparison.test === 'two-proportion-z'
          ? (value: number) => `${signed(value * 100, 1)} pp`
          : (value: number) => signed(value, 3);
      return [
        comparison.arm,
        `${scale(comparison.difference)} [${interval(comparison.ci, scale)}]`,
        formatP(comparison.adjustedPValue).replace(/^= /, ''),
        comparison.significant ? 'yes' : 'no',
        comparison.df === null
          ? testNames[comparison.test]
          : `${testNames[comparison.test]}, df ${comparison.df.toFixed(1)}`,
      ];
    }),
  ];

  return [
    header,
    '',
    ...alignColumns(armRows),
    '',
    ...alignColumns(comparisonRows),
    '',
    'Verdict:',
    ...report.verdict.map((line) => `  ${line}`),
    ...(report.notes.length > 0 ? ['', 'Notes:', ...report.notes.map((line) => `  ${line}`)] : []),
    '',
  ].join('\n');
}

function interval(ci: readonly [number, number], format: (value: number) => string): string {
  return Number.isNaN(ci[0]) ? '–' : `${format(ci[0])}, ${format(ci[1])}`;
}

/** Columns padded to their widest cell: the first left-aligned, the rest right-aligned. */
function alignColumns(rows: readonly string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [index, cell] of row.entries()) widths[index] = Math.max(widths[index] ?? 0, cell.length);
  }
  return rows.map((row) =>
    row
      .map((cell, index) =>
        index === 0 ? cell.padEnd(widths[index] ?? 0) : cell.padStart(widths[index] ?? 0),
      )
      .join('  ')
      .trimEnd(),
  );
}
