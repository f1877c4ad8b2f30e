// One experiment: per arm its sample sizes, mean reward and success rate with intervals, each arm
// against the control with its p-value, and the verdict: the numbers of `edgerl ab report`, from the
// same report object, with the text the command prints underneath. Links to promote an arm and to
// read both versions' answers to the same tasks.
import { formatAbReport } from '../../experiments/format-ab-report.ts';
import { formatP, signed } from '../../experiments/format-numbers.ts';
import { abRewardSources } from '../../db/store.ts';
import { taskSplits } from '../../protocol/statuses.ts';
import { fixed, percent } from '../format.ts';
import { type Html, html } from '../html.ts';
import type { ExperimentView } from '../data/load-experiment.ts';
import { badge, layout, type PageContext } from './layout.ts';

function interval(ci: readonly [number, number], format: (value: number) => string): string {
  return Number.isNaN(ci[0]) ? '–' : `[${format(ci[0])}, ${format(ci[1])}]`;
}

export function experimentPage(context: PageContext, data: ExperimentView): Html {
  const { links } = context;
  const { view, report } = data;
  const { experiment } = view;
  const level = `${Math.round(report.confidence * 100)}%`;
  const control = view.arms[0];
  const armRows = report.arms.map((arm, index) => {
    const stored = view.arms[index];
    return html`<tr data-arm="${arm.name}">
<td><b>${arm.name}</b>${arm.control ? html` <span class="muted">(control)</span>` : ''}${
      links.promote && stored && stored.versionStatus === 'published'
        ? html` <a class="button" href="${links.promote(experiment.name, arm.name)}">Promote…</a>`
        : ''
    }</td>
<td>${arm.adapterName}</td>
<td class="num">${percent(arm.weight)}</td>
<td class="num">${arm.observedShare === null ? '–' : percent(arm.observedShare)}</td>
<td class="num">${arm.ended}</td>
<td class="num arm-rewarded">${arm.rewarded}</td>
<td class="num arm-mean">${Number.isNaN(arm.reward.mean) ? '–' : arm.reward.mean.toFixed(3)} ${interval(arm.reward.ci, (value) => value.toFixed(3))}</td>
<td class="num">${arm.success ? html`${percent(arm.success.rate)} ${interval(arm.success.ci, percent)}` : '–'}</td>
<td class="num">${percent(arm.errorRate)}</td>
<td class="num">${percent(arm.truncationRate)}</td>
<td class="num">${fixed(arm.turnCountMean, 1)}</td>
<td class="num">${fixed(arm.latencyMsMean, 0)}</td>
<td class="num">${arm.samplesNeeded}</td>
</tr>`;
  });
  const comparisonRows = report.comparisons.map((comparison) => {
    if (comparison.kind === 'untested') {
      return html`<tr><td>${comparison.arm}</td><td colspan="5" class="wrap">${comparison.reason}</td></tr>`;
    }
    const scale =
      comparison.test === 'two-proportion-z'
        ? (value: number) => `${signed(value * 100, 1)} pp`
        : (value: number) => signed(value, 3);
    return html`<tr data-comparison="${comparison.arm}">
<td>${comparison.arm}</td>
<td class="num">${scale(comparison.difference)} ${interval(comparison.ci, scale)}</td>
<td class="num p-value">p ${formatP(comparison.pValue)}</td>
<td class="num">${report.correction === 'holm' ? `p ${formatP(comparison.adjustedPValue)}` : '–'}</td>
<td>${comparison.significant ? html`<b>yes</b>` : 'no'}</td>
<td>${comparison.test === 'welch-t' ? `Welch's t-test, df ${fixed(comparison.df, 1)}` : 'two-proportion z-test'}</td>
</tr>`;
  });
  const options =
    links.mode === 'server'
      ? html`<form class="filters" method="get" action="${links.experiment(experiment.name)}">
<label>tasks <select name="split"><option value="">all</option>${taskSplits.map((split) => html`<option value="${split}"${data.split === split ? html` selected` : ''}>${split}</option>`)}</select></label>
<label>reward <select name="reward">${abRewardSources.map((source) => html`<option value="${source}"${data.reward === source ? html` selected` : ''}>${source}</option>`)}</select></label>
<button type="submit">Recompute</button></form>`
      : '';
  const compare = control
    ? view.arms
        .slice(1)
        .filter((arm) => arm.policyVersionId !== control.policyVersionId)
        .map(
          (arm) =>
            html`<li><a href="${links.compare(control.adapterName, arm.adapterName, data.split)}">${control.adapterName} and ${arm.adapterName} on the same tasks</a></li>`,
        )
    : [];
  const body = html`<h1>Experiment ${experiment.name} ${badge(experiment.status)}</h1>
<p>Metric <b>${experiment.metric}</b>; the verdict waits for ${experiment.minSamples} rewarded trajectories per arm; ${level} intervals.${
    experiment.description ? html` ${experiment.description}` : ''
  }</p>
${options}
<div class="scroll"><table class="arms"><thead><tr><th>arm</th><th>version</th><th class="num">weight</th><th class="num">share</th><th class="num">ended</th><th class="num">rewarded</th><th class="num">mean reward ${level} CI</th><th class="num">success ${level} CI</th><th class="num">errors</th><th class="num">truncated</th><th class="num">turns</th><th class="num">latency ms</th><th class="num">still needed</th></tr></thead><tbody>${armRows}</tbody></table></div>
<h2>Against the control${control ? ` (${control.name})` : ''}</h2>
<div class="scroll"><table class="comparisons"><thead><tr><th>arm</th><th class="num">difference ${level} CI</th><th class="num">p</th><th class="num">p (Holm)</th><th>significant</th><th>test</th></tr></thead><tbody>${comparisonRows}</tbody></table></div>
<h2>Verdict</h2>
<div class="verdict">${report.verdict.map((line) => html`<p>${line}</p>`)}</div>
${report.notes.length > 0 ? html`<h3>Notes</h3><ul>${report.notes.map((note) => html`<li>${note}</li>`)}</ul>` : ''}
${compare.length > 0 ? html`<h2>Same task, two versions</h2><ul>${compare}</ul>` : ''}
<details><summary>As <code>edgerl ab report ${experiment.name}</code> prints it</summary><pre class="report">${formatAbReport(report)}</pre></details>`;
  return layout(context, { title: `Experiment ${experiment.name}`, section: 'experiments', body });
}
