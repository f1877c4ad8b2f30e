// The demo's summary: one plain object (what `--json` prints) and its text rendering for people. The
// A/B part is the experiments report (`edgerl ab report`'s), its p-values formatted as that report
// formats them. Pure: no I/O.
import type { VersionSplitReward } from '../../db/store.ts';
import type { AbArmReport, AbReport } from '../../experiments/ab-report.ts';
import { formatP } from '../../experiments/format-numbers.ts';
import { type CopyAccuracy, describeCopyAccuracy } from './copy-probe.ts';
import type { DemoConfig } from './demo-config.ts';
import type { StepReward } from './demo-queries.ts';
import type { RoundRecord } from './rl-rounds.ts';

export const demoPhases = ['services', 'warmStart', 'rl', 'evaluate', 'report'] as const;
export type DemoPhase = (typeof demoPhases)[number];

export interface DemoSummary {
  readonly config: DemoConfig;
  /** Wall seconds per phase. */
  readonly seconds: Record<DemoPhase, number> & { readonly total: number };
  readonly store: { readonly target: string; readonly driver: string };
  readonly dataDir: string;
  /** The console's static export: its index.html. */
  readonly consoleExport: string;
  /** The command that serves the live console over the demo's store, and the URL it prints. */
  readonly console: { readonly command: string; readonly url: string };
  readonly policy: string;
  readonly startVersion: string;
  /** The version that ships and that the A/B compares with the start (`shipRule` says how it was chosen). */
  readonly finalVersion: string;
  /** The newest published version, which the loop ended with. */
  readonly lastVersion: string;
  readonly shipRule: 'best-validation' | 'last';
  /** Every published version's validation episodes (cli/demo/validate.ts), in version order. */
  readonly validation: readonly VersionSplitReward[];
  readonly steps: readonly StepReward[];
  readonly rounds: readonly RoundRecord[];
  readonly reused: { readonly model: boolean; readonly warmStart: boolean; readonly rounds: number };
  /** The warm start's optimiser steps and its copy probe's last reading (none when reused). */
  readonly warmStart: {
    readonly steps: number;
    readonly copy?: CopyAccuracy;
    readonly copyReached?: boolean;
  };
  /** The eval experiment's id; `ab` is its report (verifier rewards). */
  readonly experimentId: string;
  readonly ab: AbReport;
  readonly counts: Readonly<Record<string, number>>;
  readonly queries: readonly string[];
}

/** Three queries worth trying on the demo's store (views from db/migrations). */
export function demoQueries(experimentId: string): string[] {
  return [
    'select version, adapter_name, status, published_at from policy_versions order by version',
    `select * from experiment_arm_stats where experiment_id = '${experimentId}'`,
    'select index, role, text from turn_log where trajectory_id = (select id from trajectories where verifier_reward = 1 order by started_at desc limit 1) order by index',
  ];
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;
/** `p = 0.4142` or `p < 0.0001`: the report's formatP already holds the relation. */
const pValue = (p: number) => `p ${formatP(p)}`;
const level = (report: AbReport) => `${Math.round(report.confidence * 100)}%`;

/** One arm: its success rate with the Wilson interval, or its mean reward where rewards are not 0/1. */
export function describeArm(report: AbReport, arm: AbArmReport): string {
  const errors = arm.errors > 0 ? `, ${arm.errors} error(s)` : '';
  if (arm.success && !Number.isNaN(arm.success.rate)) {
    const { rate, successes, n, ci } = arm.success;
    return `${percent(rate).padStart(6)} success (${successes}/${n}, ${level(report)} CI ${percent(ci[0])}–${percent(ci[1])})${errors}`;
  }
  const { mean, n } = arm.reward;
  return `mean reward ${Number.isNaN(mean) ? '–' : mean.toFixed(3)} (${n} rewarded)${errors}`;
}

/** The comparison of the final arm with the control (start): difference, interval, p and the test. */
export function describeComparison(report: AbReport): string {
  const comparison = report.comparisons[0];
  if (!comparison) return 'no comparison';
  const label = `${comparison.arm} − ${comparison.control}`;
  if (comparison.kind === 'untested') return `${label}: not compared (${comparison.reason})`;
  const ci = `${level(report)} CI`;
  const p = pValue(comparison.pValue);
  if (comparison.test === 'two-proportion-z') {
    const points = (x: number) => (100 * x).toFixed(1);
    return (
      `${label}: ${comparison.difference >= 0 ? '+' : ''}${points(comparison.difference)} points ` +
      `(${ci} ${points(comparison.ci[0])} to ${points(comparison.ci[1])}), ${p} (two-proportion z-test)`
    );
  }
  return (
    `${label}: mean reward ${comparison.difference >= 0 ? '+' : ''}${comparison.difference.toFixed(3)} ` +
    `(${ci} ${comparison.ci[0].toFixed(3)} to ${comparison.ci[1].toFixed(3)}), ${p} (Welch's t-test)`
  );
}

export function formatSummary(summary: DemoSummary): string {
  const { ab } = summary;
  const lines: string[] = [];
  lines.push('', 'edgerl demo: summary', '');
  const warm = summary.warmStart;
  if (warm.copy)
    lines.push(
      `Warm start: ${warm.steps} steps; copy on held-out demonstrations: ${describeCopyAccuracy(warm.copy)}`,
      '',
    );
  lines.push("Reward per training step (mean verifier reward of the step's groups):");
  const rl = summary.steps.filter((step) => step.kind === 'rl' && step.reward !== null);
  if (rl.length === 0) lines.push('  (no GRPO step recorded)');
  for (const step of rl)
    lines.push(
      `  step ${String(step.step).padStart(3)}  ${(step.reward as number).toFixed(3)}  ${'#'.repeat(Math.round((step.reward as number) * 40))}`,
    );
  if (summary.validation.length > 0) {
    lines.push('', 'Validation success per version (the A/B tests the one that ships, marked *):');
    for (const row of summary.validation)
      lines.push(
        `  ${(row.adapterName === summary.finalVersion ? '* ' : '  ') + row.adapterName.padEnd(10)} ${row.meanReward === null ? '–' : percent(row.meanReward).padStart(6)} (${row.episodes} episodes)`,
      );
  }
  lines.push('', `A/B on held-out tasks (experiment ${summary.experimentId}):`);
  for (const arm of ab.arms)
    lines.push(`  ${arm.name.padEnd(5)} ${arm.adapterName.padEnd(10)} ${describeArm(ab, arm)}`);
  lines.push(`  ${describeComparison(ab)}`);
  lines.push('', 'Wall time:');
  for (const [phase, seconds] of Object.entries(summary.seconds))
    lines.push(`  ${phase.padEnd(10)} ${seconds.toFixed(1).padStart(7)} s`);
  lines.push('', `Data: ${summary.dataDir} (store: ${summary.store.target}, ${summary.store.driver})`);
  lines.push(`Console (static export, opens offline): ${summary.consoleExport}`);
  lines.push(`Console over this store: ${summary.console.command}  →  ${summary.console.url}`);
  lines.push('', 'Try:');
  for (const query of summary.queries)
    lines.push(
      `  EDGERL_DATA_DIR=${summary.dataDir}/pgdata npx edgerl sql "${query.replaceAll('"', '\\"')}"`,
    );
  lines.push('');
  return lines.join('\n');
}
