// The text `edgerl score` prints for one group: status, then one line per trajectory (score, the score
// of each ordering when there were several, explanation), then notes and cost. Pure.
import type { ScoreAndRecordResult } from './score-and-record.ts';

export function formatScoreReport(groupId: string, outcome: ScoreAndRecordResult): string {
  const result = outcome.result;
  const lines: string[] = [];
  const tokens = `${result.usage.promptTokens} prompt + ${result.usage.completionTokens} completion tokens`;
  const cost = result.costUsd !== undefined ? `, ~$${result.costUsd.toFixed(4)}` : '';
  if (outcome.status === 'unscored') {
    lines.push(`group ${groupId}: unscored — ${outcome.reason}`);
    lines.push(`judge ${result.judgeModel}: ${tokens}${cost}`);
    return `${lines.join('\n')}\n`;
  }
  if (result.status !== 'scored') return `group ${groupId}: ${result.status}\n`;
  const flags = [result.cached ? 'from cache' : '', result.noSignal ? 'no signal' : ''].filter(Boolean);
  lines.push(
    `group ${groupId}: scored by ${result.judgeModel}${flags.length ? ` (${flags.join(', ')})` : ''}`,
  );
  for (const record of outcome.records) {
    const orders = record.orderingScores.length > 1 ? ` [${record.orderingScores.map(fixed).join(' ')}]` : '';
    const verifier = record.verifierReward !== undefined ? ` verifier ${fixed(record.verifierReward)} →` : '';
    lines.push(
      `  ${record.trajectoryId}  score ${fixed(record.judgeScore)}${orders}${verifier} reward ${fixed(record.reward)}`,
    );
    lines.push(`    ${record.explanation.replace(/\s+/g, ' ').trim()}`);
  }
  for (const note of result.notes) lines.push(`note: ${note}`);
  lines.push(`judge usage: ${tokens}${cost}`);
  return `${lines.join('\n')}\n`;
}

function fixed(value: number): string {
  return value.toFixed(3);
}
