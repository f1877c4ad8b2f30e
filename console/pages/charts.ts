// A grid of step charts: each a placeholder the client script draws with uPlot from the JSON beside
// it (so a static export draws the same charts from the same data), or a line saying the metric was
// not recorded.
import { type Html, html, jsonScript } from '../html.ts';
import type { ChartData } from '../data/chart-series.ts';

export function chartGrid(charts: readonly ChartData[]): Html {
  return html`<p class="muted">Drag across a chart to zoom (all charts follow); double-click to zoom out.</p>
<div class="charts">${charts.map(
    (chart) => html`<section class="chart" data-chart-box="${chart.id}">
<h3>${chart.title}</h3>
${
  chart.points === 0
    ? html`<div class="empty">not recorded in ${chart.series.length > 1 ? 'these runs' : 'this run'}</div>`
    : html`<div class="plot" data-chart="${chart.id}" data-points="${chart.points}"></div>${jsonScript(`chart-${chart.id}`, chart)}`
}
</section>`,
  )}</div>`;
}
