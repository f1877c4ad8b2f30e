// A GRPO group side by side: one column per trajectory with its status, rewards, advantage, the
// judge's explanation and its turns, so the reason one episode scored above another is in view. A
// running group's page polls for new turns and appends them (console.js) without a reload.
import { fixed, shortId, utc } from '../format.ts';
import { type Html, html } from '../html.ts';
import type { GroupView } from '../data/load-group.ts';
import { badge, layout, type PageContext } from './layout.ts';
import { driftBadge, trajectoryFacts } from './trajectory-summary.ts';
import { turnView } from './turn-view.ts';

export function groupPage(context: PageContext, view: GroupView, options: { readonly pollMs: number }): Html {
  const { links } = context;
  const { group, task } = view;
  const live = group.status === 'running' && links.groupLive;
  const columns = view.trajectories.map((trajectory, slot) => {
    const judge = view.judge[trajectory.id];
    const turns = trajectory.turns ?? [];
    const lastIndex = turns.at(-1)?.index ?? -1;
    return html`<article class="trajectory-column" data-trajectory="${trajectory.id}" data-last-index="${lastIndex}">
<h3><a href="${links.trajectory(trajectory.id)}">#${slot + 1} ${shortId(trajectory.id)}</a> <span class="status">${badge(trajectory.status)}</span> ${driftBadge(trajectory)}</h3>
${trajectoryFacts(trajectory, view.advantages.advantages[trajectory.id])}
${judge?.explanation ? html`<div class="judge"><span class="muted">judge (${judge.judgeModel}):</span> <span class="text">${judge.explanation}</span></div>` : ''}
<ol class="turns">${turns.map((turn) => turnView(turn, { compact: true }))}</ol>
</article>`;
  });
  const missing = Math.max(0, group.size - view.trajectories.length);
  const scale =
    view.advantages.scale === 'group'
      ? '(reward − group mean) ÷ group std'
      : 'reward − group mean (no std division)';
  const body = html`<h1>Group ${shortId(group.id)} <span class="group-status">${badge(group.status)}</span></h1>
<dl class="facts">
<dt>task</dt><dd>${task.env} / ${task.key} <span class="muted">(${task.split})</span></dd>
<dt>input</dt><dd><code>${JSON.stringify(task.input)}</code></dd>
<dt>version</dt><dd>${view.version?.adapterName ?? '–'}</dd>
<dt>size</dt><dd>${group.size} (${group.endedCount} ended)</dd>
<dt>created</dt><dd>${utc(group.createdAt)}</dd>
${group.scoredAt ? html`<dt>scored</dt><dd>${utc(group.scoredAt)}</dd>` : ''}
${group.trainedAt ? html`<dt>trained</dt><dd>${utc(group.trainedAt)}${group.trainingRunId ? html` by <a href="${links.run(group.trainingRunId)}">run ${shortId(group.trainingRunId)}</a>` : ''}</dd>` : ''}
${group.statusReason ? html`<dt>reason</dt><dd>${group.statusReason}</dd>` : ''}
${group.lastScoreError ? html`<dt>last judge error</dt><dd>${group.lastScoreError} (${group.scoreAttempts} attempt(s))</dd>` : ''}
<dt>advantage</dt><dd>${scale}, ${view.advantages.scaleFrom === 'run' ? 'as the run that trained it' : "edgerl train's default"}; group mean ${fixed(view.advantages.mean, 3)}, std ${fixed(view.advantages.std, 3)}${view.advantages.noSignal && view.advantages.mean !== null ? html` <span class="badge unscored">no signal</span>` : ''}</dd>
</dl>
${
  live
    ? html`<p class="notice live" data-live-group="${group.id}" data-live-url="${links.groupLive?.(group.id) ?? ''}" data-poll-ms="${options.pollMs}" data-trajectory-link="${links.trajectory('TRAJECTORY')}">Live: new turns appear as they are stored.</p>`
    : ''
}
<div class="group-columns" data-group-size="${group.size}">${columns}${Array.from(
    { length: missing },
    () => html`<article class="trajectory-column placeholder"><p class="muted">not started yet</p></article>`,
  )}</div>`;
  return layout(context, { title: `Group ${shortId(group.id)}`, section: 'groups', body });
}
