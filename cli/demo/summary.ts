// The demo's summary: one plain object (what `--json` prints and the HTML report draws) and its text
// rendering for people. Pure: no I/O.
import type { AbReport } from './ab-report.ts';
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
  readonly reportPath: string;
  readonly policy: string;
  readonly startVersion: string;
  readonly finalVersion: string;
  readonly steps: readonly StepReward[];
  readonly rounds: readonly RoundRecord[];
  readonly reused: { readonly model: boolean; readonly warmStart: boolean; readonly rounds: number };
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
const pValue = (p: number) => (p < 0.001 ? 'p < 0.001' : `p = ${p.toFixed(3)}`);

export function formatSummary(summary: DemoSummary): string {
  const { ab } = summary;
  const lines: string[] = [];
  lines.push('', 'edgerl demo: summary', '');
  lines.push("Reward per training step (mean verifier reward of the step's groups):");
  const rl = summary.steps.filter((step) => step.kind === 'rl' && step.reward !== null);
  if (rl.length === 0) lines.push('  (no GRPO step recorded)');
  for (const step of rl)
    lines.push(
      `  step ${String(step.step).padStart(3)}  ${(step.reward as number).toFixed(3)}  ${'#'.repeat(Math.round((step.reward as number) * 40))}`,
    );
  lines.push('', `A/B on held-out tasks (experiment ${ab.experimentId}):`);
  for (const arm of ab.arms) {
    lines.push(
      `  ${arm.arm.padEnd(5)} ${arm.adapterName.padEnd(10)} ${percent(arm.success.rate).padStart(6)} success ` +
        `(${arm.success.successes}/${arm.episodes}, 95% CI ${percent(arm.success.ci[0])}–${percent(arm.success.ci[1])})` +
        `${arm.errors > 0 ? `, ${arm.errors} error(s)` : ''}`,
    );
  }
  const t = ab.successTest;
  lines.push(
    `  final − start: ${t.difference >= 0 ? '+' : ''}${(100 * t.difference).toFixed(1)} points ` +
      `(95% CI ${(100 * t.ci[0]).toFixed(1)} to ${(100 * t.ci[1]).toFixed(1)}), ${pValue(t.pValue)} (two-proportion z-test)`,
  );
  lines.push('', 'Wall time:');
  for (const [phase, seconds] of Object.entries(summary.seconds))
    lines.push(`  ${phase.padEnd(10)} ${seconds.toFixed(1).padStart(7)} s`);
  lines.push('', `Data: ${summary.dataDir} (store: ${summary.store.target}, ${summary.store.driver})`);
  lines.push(`Report: ${summary.reportPath}`);
  lines.push('', 'Try:');
  for (const query of summary.queries)
    lines.push(
      `  EDGERL_DATA_DIR=${summary.dataDir}/pgdata npx edgerl sql "${query.replaceAll('"', '\\"')}"`,
    );
  lines.push('');
  return lines.join('\n');
}
