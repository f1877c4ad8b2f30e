// One training run: what it started from and produced, its configuration, its charts and every
// step's numbers in a table (the table is what to copy into a bug report).
import type { TrainingRunListing } from '../../db/store.ts';
import { count, fixed, shortId, utc } from '../format.ts';
import { type Html, html } from '../html.ts';
import type { RunsView } from '../data/load-runs.ts';
import { chartGrid } from './charts.ts';
import { badge, layout, type PageContext } from './layout.ts';

export function runPage(
  context: PageContext,
  listing: TrainingRunListing,
  view: Omit<RunsView, 'runs'>,
): Html {
  const { run } = listing;
  const steps = view.selected[0]?.steps ?? [];
  const body = html`<h1>Training run ${shortId(run.id)} ${badge(run.status)}</h1>
<dl class="facts">
<dt>id</dt><dd><code>${run.id}</code></dd>
<dt>policy</dt><dd>${listing.policyName}</dd>
<dt>started from</dt><dd>${listing.baseAdapterName ?? '–'}</dd>
<dt>produced</dt><dd>${listing.versions.length > 0 ? listing.versions.join(', ') : '–'}</dd>
<dt>started</dt><dd>${utc(run.startedAt)}</dd>
<dt>finished</dt><dd>${utc(run.finishedAt)}</dd>
<dt>steps</dt><dd>${count(listing.stepCount)}${listing.firstStep !== null ? ` (${listing.firstStep}–${listing.lastStep})` : ''}</dd>
${run.errorReason ? html`<dt>error</dt><dd>${run.errorReason}</dd>` : ''}
</dl>
<p><a href="${context.links.runs([run.id])}">Overlay with other runs</a></p>
${chartGrid(view.charts)}
<h2>Steps</h2>
<div class="scroll"><table class="steps">
<thead><tr><th class="num">step</th><th class="num">reward mean</th><th class="num">reward std</th><th class="num">loss</th><th class="num">KL</th><th class="num">clip</th><th class="num">grad norm</th><th class="num">staleness</th><th class="num">tokens/s</th><th class="num">groups</th></tr></thead>
<tbody>${steps.map(
    (step) =>
      html`<tr><td class="num">${step.step}</td><td class="num">${fixed(step.metrics['reward/mean'], 3)}</td><td class="num">${fixed(step.metrics['reward/std'], 3)}</td><td class="num">${fixed(step.metrics.loss, 4)}</td><td class="num">${fixed(step.metrics['kl/mean'], 5)}</td><td class="num">${fixed(step.metrics['clip/fraction'], 3)}</td><td class="num">${fixed(step.metrics['grad/norm'], 3)}</td><td class="num">${step.staleness ? `${fixed(step.staleness.mean, 2)} (max ${step.staleness.max})` : '–'}</td><td class="num">${step.metrics['tokens/per_second'] === undefined ? '–' : count(step.metrics['tokens/per_second'])}</td><td class="num">${step.groupCount}</td></tr>`,
  )}</tbody></table></div>
<h2>Configuration</h2>
<pre>${JSON.stringify(run.config, null, 2)}</pre>`;
  return layout(context, { title: `Run ${shortId(run.id)}`, section: 'runs', body });
}
