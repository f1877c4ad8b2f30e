// One trajectory turn by turn: messages, tool calls with arguments, tool results and errors, and for
// each assistant turn its sampled tokens shaded by sampling probability (darker: less likely), who
// served it, its latency, and the drift flags.
import { shortId, utc } from '../format.ts';
import { type Html, html } from '../html.ts';
import type { TrajectoryView } from '../data/load-trajectory.ts';
import { badge, layout, type PageContext } from './layout.ts';
import { driftBadge, trajectoryFacts } from './trajectory-summary.ts';
import { turnView } from './turn-view.ts';

function shadingLegend(): Html {
  return html`<p class="muted">Token shading: sampling probability <span class="legend-scale">${[
    0, 2, 4, 6, 8, 9,
  ].map(
    (bucket) => html`<span class="tok p${bucket}">${bucket === 9 ? '≥0.9' : `${bucket / 10}`}</span>`,
  )}</span>; hover a token for its id and logprob.</p>`;
}

export function trajectoryPage(
  context: PageContext,
  view: TrajectoryView,
  options: { readonly tokenText?: (ids: readonly number[]) => readonly string[] },
): Html {
  const { links } = context;
  const { trajectory, task } = view;
  const offered = trajectory.tools?.map((tool) => tool.function.name) ?? [];
  const body = html`<h1>Trajectory ${shortId(trajectory.id)} ${badge(trajectory.status)} ${driftBadge(trajectory)}</h1>
<dl class="facts">
<dt>id</dt><dd><code>${trajectory.id}</code></dd>
<dt>task</dt><dd>${task ? html`${task.env} / ${task.key} <span class="muted">(${task.split})</span>` : trajectory.env}</dd>
${task ? html`<dt>input</dt><dd><code>${JSON.stringify(task.input)}</code></dd>` : ''}
${trajectory.groupId ? html`<dt>group</dt><dd><a href="${links.group(trajectory.groupId)}">${shortId(trajectory.groupId)}</a>${view.slot ? `, #${view.slot.index} of ${view.slot.of}` : ''}</dd>` : ''}
<dt>version</dt><dd>${view.version?.adapterName ?? '–'}</dd>
<dt>started</dt><dd>${utc(trajectory.startedAt)}</dd>
<dt>finished</dt><dd>${utc(trajectory.finishedAt)}</dd>
<dt>tools offered</dt><dd>${offered.length > 0 ? offered.join(', ') : '–'}</dd>
${trajectory.resumes > 0 ? html`<dt>resumed</dt><dd>${trajectory.resumes} time(s)</dd>` : ''}
</dl>
${trajectoryFacts(trajectory, view.advantage)}
${view.judge?.explanation ? html`<h2>Judge</h2><p><span class="muted">${view.judge.judgeModel}, score ${view.judge.score}:</span> <span class="text">${view.judge.explanation}</span></p>` : ''}
<h2>Turns</h2>
${view.turns.some((turn) => (turn.completionTokenIds?.length ?? 0) > 0) ? shadingLegend() : ''}
<div class="turn-list">${view.turns.map((turn) => turnView(turn, { compact: false, ...(options.tokenText ? { tokenText: options.tokenText } : {}) }))}</div>
${view.turns.length === 0 ? html`<p class="muted">No turn stored yet.</p>` : ''}`;
  return layout(context, { title: `Trajectory ${shortId(trajectory.id)}`, section: 'groups', body });
}
