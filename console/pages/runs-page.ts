// Runs: every training run with its last step at a glance, and the chosen runs' step metrics charted
// on the step axis (several runs overlaid, optionally aligned at their first step).
import type { TrainingRunListing } from '../../db/store.ts';
import { count, fixed, shortId, utc } from '../format.ts';
import { type Html, html } from '../html.ts';
import type { RunsView } from '../data/load-runs.ts';
import { chartGrid } from './charts.ts';
import { badge, layout, type PageContext } from './layout.ts';

function stepRange(listing: TrainingRunListing): string {
  if (listing.firstStep === null || listing.lastStep === null) return '–';
  return listing.firstStep === listing.lastStep
    ? String(listing.firstStep)
    : `${listing.firstStep}–${listing.lastStep}`;
}

export function runsPage(context: PageContext, view: RunsView): Html {
  const { links } = context;
  const chosen = new Set(view.selected.map((run) => run.id));
  const server = links.mode === 'server';
  const rows = view.runs.map((listing) => {
    const last = listing.lastMetrics ?? {};
    return html`<tr data-run="${listing.run.id}">
${server ? html`<td><input type="checkbox" name="run" value="${listing.run.id}" aria-label="overlay run ${shortId(listing.run.id)}"${chosen.has(listing.run.id) ? html` checked` : ''}></td>` : ''}
<td><a href="${links.run(listing.run.id)}">${shortId(listing.run.id)}</a></td>
<td>${listing.policyName}</td>
<td>${badge(listing.run.status)}</td>
<td>${utc(listing.run.startedAt)}</td>
<td class="num">${count(listing.stepCount)}</td>
<td class="num">${stepRange(listing)}</td>
<td class="num">${fixed(last['reward/mean'], 3)}</td>
<td class="num">${fixed(last.loss, 4)}</td>
<td>${listing.baseAdapterName ?? '–'} → ${listing.versions.length > 0 ? listing.versions.join(', ') : '–'}</td>
</tr>`;
  });
  const table = html`<div class="scroll"><table>
<thead><tr>${server ? html`<th>overlay</th>` : ''}<th>run</th><th>policy</th><th>status</th><th>started</th><th class="num">steps</th><th class="num">step range</th><th class="num">last reward</th><th class="num">last loss</th><th>from → produced</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  const body = html`<h1>Training runs</h1>
${
  view.runs.length === 0
    ? html`<p>No training run yet. <code>edgerl train</code> records one per trainer session.</p>`
    : server
      ? html`<form method="get" action="${links.runs()}" class="filters">${table}
<label>x axis <select name="align"><option value="step"${view.align === 'step' ? html` selected` : ''}>training step</option><option value="first"${view.align === 'first' ? html` selected` : ''}>steps since each run began</option></select></label>
<button type="submit">Overlay the ticked runs</button></form>`
      : table
}
${view.selected.length > 0 ? html`<h2>${view.selected.length === 1 ? 'Run' : 'Runs'} ${view.selected.map((run) => run.label).join(' · ')}</h2>${chartGrid(view.charts)}` : ''}`;
  return layout(context, { title: 'Runs', section: 'runs', body });
}
