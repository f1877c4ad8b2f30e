// Experiments: every A/B experiment, newest first, with its arms and how many rewarded trajectories
// each has against the sample size the verdict waits for.
import type { AbExperimentListing } from '../../db/store.ts';
import { utc } from '../format.ts';
import { type Html, html } from '../html.ts';
import { badge, layout, type PageContext } from './layout.ts';

export function experimentsPage(context: PageContext, listings: readonly AbExperimentListing[]): Html {
  const { links } = context;
  const rows = listings.map(
    ({ experiment, policyName, arms }) => html`<tr data-experiment="${experiment.name}">
<td><a href="${links.experiment(experiment.name)}">${experiment.name}</a></td>
<td>${badge(experiment.status)}</td>
<td>${policyName}</td>
<td>${experiment.metric}</td>
<td>${utc(experiment.createdAt)}</td>
<td class="wrap">${arms.map((arm, index) => html`${index > 0 ? ' · ' : ''}<b>${arm.name}</b> ${arm.adapterName !== arm.name ? `(${arm.adapterName}) ` : ''}${arm.rewarded}/${experiment.minSamples} rewarded`)}</td>
</tr>`,
  );
  const body = html`<h1>Experiments</h1>
${
  listings.length === 0
    ? html`<p>No experiment yet: <code>edgerl ab create</code> starts one.</p>`
    : html`<div class="scroll"><table><thead><tr><th>name</th><th>status</th><th>policy</th><th>metric</th><th>created</th><th>arms (rewarded / needed)</th></tr></thead><tbody>${rows}</tbody></table></div>`
}`;
  return layout(context, { title: 'Experiments', section: 'experiments', body });
}
