// The demo's self-contained HTML report: the reward curve as inline SVG and the A/B table, no
// scripts and no network assets, so it opens offline from disk. Pure: summary in, a string out.
import { type DemoSummary, describeComparison } from './summary.ts';

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

/** Points of the reward curve: GRPO steps' mean reward on [0, 1], and the rounds' rollout success. */
export function rewardCurveSvg(
  points: readonly { x: number; y: number }[],
  width = 560,
  height = 240,
): string {
  const pad = 36;
  const xs = points.map((p) => p.x);
  const minX = Math.min(...xs, 0);
  const maxX = Math.max(...xs, minX + 1);
  const sx = (x: number) => pad + ((x - minX) / (maxX - minX)) * (width - 2 * pad);
  const sy = (y: number) => height - pad - y * (height - 2 * pad);
  const path = points
    .map((p, i) => `${i === 0 ? 'M' : 'L'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`)
    .join(' ');
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (y) =>
        `<line x1="${pad}" x2="${width - pad}" y1="${sy(y)}" y2="${sy(y)}" stroke="#ddd"/>` +
        `<text x="${pad - 6}" y="${sy(y) + 4}" text-anchor="end" font-size="11">${y.toFixed(2)}</text>`,
    )
    .join('');
  const dots = points
    .map((p) => `<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="3" fill="#2563eb"/>`)
    .join('');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="mean reward per training step">` +
    `${grid}<path d="${path}" fill="none" stroke="#2563eb" stroke-width="2"/>${dots}` +
    `<text x="${width / 2}" y="${height - 6}" text-anchor="middle" font-size="12">training step</text></svg>`
  );
}

export function htmlReport(summary: DemoSummary): string {
  const points = summary.steps
    .filter((step) => step.kind === 'rl' && step.reward !== null)
    .map((step) => ({ x: step.step, y: step.reward as number }));
  const level = `${Math.round(summary.ab.confidence * 100)}%`;
  const rows = summary.ab.arms
    .map((arm) => {
      const success = arm.success && !Number.isNaN(arm.success.rate) ? arm.success : undefined;
      return (
        `<tr><td>${escapeHtml(arm.name)}</td><td>${escapeHtml(arm.adapterName)}</td><td>${arm.rewarded}</td>` +
        (success
          ? `<td>${success.successes}</td><td>${percent(success.rate)}</td>` +
            `<td>${percent(success.ci[0])} – ${percent(success.ci[1])}</td>`
          : '<td>–</td><td>–</td><td>–</td>') +
        `<td>${arm.errors}</td></tr>`
      );
    })
    .join('');
  const phases = Object.entries(summary.seconds)
    .map(([phase, seconds]) => `<tr><td>${escapeHtml(phase)}</td><td>${seconds.toFixed(1)} s</td></tr>`)
    .join('');
  const queries = summary.queries.map((q) => `<li><code>${escapeHtml(q)}</code></li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>edgerl demo report</title>
<style>body{font:14px/1.5 system-ui,sans-serif;max-width:760px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}code{font-size:12px}</style></head><body>
<h1>edgerl demo</h1>
<p>Policy <b>${escapeHtml(summary.policy)}</b> on the multi-hop lookup environment: warm start ${escapeHtml(summary.startVersion)},
${summary.rounds.length + summary.reused.rounds} RL round(s) of ${summary.config.groupsPerRound} groups × ${summary.config.groupSize} episodes, final ${escapeHtml(summary.finalVersion)}.</p>
<h2>Mean reward per GRPO step</h2>
${points.length > 0 ? rewardCurveSvg(points) : '<p>No GRPO step recorded.</p>'}
<h2>A/B on held-out tasks</h2>
<table><tr><th>arm</th><th>adapter</th><th>episodes</th><th>successes</th><th>success</th><th>${level} CI (Wilson)</th><th>errors</th></tr>${rows}</table>
<p>${escapeHtml(describeComparison(summary.ab))}; experiment <code>${escapeHtml(summary.experimentId)}</code>.</p>
<h2>Wall time</h2><table>${phases}</table>
<h2>Where the data is</h2><p><code>${escapeHtml(summary.dataDir)}</code> (store ${escapeHtml(summary.store.target)}). Try with <code>edgerl sql</code>:</p><ul>${queries}</ul>
</body></html>
`;
}
