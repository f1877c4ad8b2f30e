// Two versions' answers to the same tasks side by side: per task both latest answers with their
// rewards, and a tally of where they differ (the rows worth reading first are marked).
import type { TaskAnswer } from '../../db/store.ts';
import { fixed, shortId } from '../format.ts';
import { type Html, html } from '../html.ts';
import { type CompareView, rightThreshold } from '../data/load-compare.ts';
import { badge, layout, type PageContext } from './layout.ts';

function answerCell(context: PageContext, answer: TaskAnswer, label: string): Html {
  const right = answer.reward !== null && answer.reward >= rightThreshold;
  return html`<div class="answer ${right ? 'right' : 'wrong'}"><span class="muted">${label}</span> ${badge(answer.status)} reward <b>${fixed(answer.reward, 2)}</b> · ${answer.turnCount} turns · <a href="${context.links.trajectory(answer.trajectoryId)}">${shortId(answer.trajectoryId)}</a><div class="text">${answer.answer ?? '(no answer)'}</div></div>`;
}

export function comparePage(context: PageContext, view: CompareView): Html {
  const { a, b, tally } = view;
  const cells = view.rows.map((row) => {
    const [x, y] = row.answers;
    const differ = (x.reward ?? -1) >= rightThreshold !== (y.reward ?? -1) >= rightThreshold;
    return html`<div class="task${differ ? ' differ' : ''}" data-task="${row.task.key}"><b>${row.task.key}</b>${differ ? html` <span class="badge truncated">differ</span>` : ''}<div class="muted"><code>${JSON.stringify(row.task.input)}</code></div></div>${answerCell(context, x, a.adapterName)}${answerCell(context, y, b.adapterName)}`;
  });
  const body = html`<h1>Same task: ${a.adapterName} and ${b.adapterName}</h1>
<p>${view.rows.length} task(s)${view.split ? ` of the ${view.split} split` : ''} answered by both (each version's latest ended trajectory). Right (reward ≥ ${rightThreshold}): both ${tally.both}, only ${a.adapterName} ${tally.onlyA}, only ${b.adapterName} ${tally.onlyB}, neither ${tally.neither}.</p>
${
  view.rows.length === 0
    ? html`<p>No task was answered by both versions${view.split ? ` in the ${view.split} split` : ''}.</p>`
    : html`<div class="compare"><div class="head task-head">task</div><div class="head">${a.adapterName}</div><div class="head">${b.adapterName}</div>${cells}</div>`
}`;
  return layout(context, { title: `${a.adapterName} vs ${b.adapterName}`, section: 'experiments', body });
}
