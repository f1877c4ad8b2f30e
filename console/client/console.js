// The console's one browser script: draws the step charts with uPlot from the JSON block beside each
// (same data in a static export), keeps their zoom in step, and polls a running group for new turns.
// Plain JavaScript, no build step. Stored text reaches the page through textContent only, never as markup.
(() => {
  const palette = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bf8700', '#1b7c83', '#e16f24', '#57606a'];
  const chartHeight = 220;
  /** Drawn charts, for people poking at the page and for the browser tests. */
  const charts = [];
  window.edgerlConsole = { charts };

  function drawCharts() {
    const plots = document.querySelectorAll('[data-chart]');
    if (plots.length === 0) return;
    if (typeof window.uPlot !== 'function') throw new Error('edgerl console: uPlot did not load');
    let syncing = false;
    const followZoom = (source) => {
      if (syncing) return;
      syncing = true;
      const { min, max } = source.scales.x;
      for (const chart of charts) if (chart.uplot !== source) chart.uplot.setScale('x', { min, max });
      syncing = false;
    };
    for (const element of plots) {
      const id = element.dataset.chart;
      const block = document.getElementById(`chart-${id}`);
      if (!block) continue;
      const data = JSON.parse(block.textContent);
      const options = {
        width: Math.max(200, element.clientWidth),
        height: chartHeight,
        scales: { x: { time: false } },
        axes: [{ label: data.xLabel }, {}],
        cursor: { drag: { x: true, y: false } },
        series: [
          { label: data.xLabel },
          ...data.series.map((series) => ({
            label: series.label,
            stroke: palette[series.run % palette.length],
            width: series.dash ? 1 : 2,
            ...(series.dash
              ? { dash: [4, 4], points: { show: false } }
              : { points: { show: true, size: 5 } }),
            spanGaps: true,
          })),
        ],
        hooks: { setScale: [(u, key) => key === 'x' && followZoom(u)] },
      };
      const uplot = new window.uPlot(
        options,
        [data.x, ...data.series.map((series) => series.values)],
        element,
      );
      charts.push({ id, uplot, points: data.points });
    }
    let pending = 0;
    window.addEventListener('resize', () => {
      cancelAnimationFrame(pending);
      pending = requestAnimationFrame(() => {
        for (const chart of charts) {
          const box = chart.uplot.root.parentElement;
          chart.uplot.setSize({ width: Math.max(200, box.clientWidth), height: chartHeight });
        }
      });
    });
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fixed(value, digits) {
    return value === null || value === undefined ? '–' : Number(value).toFixed(digits);
  }

  /** A turn as the server's compact view renders it (console/pages/turn-view.ts). */
  function turnItem(turn) {
    const item = element('li', `${turn.role}${turn.toolError ? ' failed' : ''}`);
    item.dataset.turnIndex = String(turn.index);
    const head =
      turn.role === 'tool'
        ? `#${turn.index} ${turn.role} · ${turn.toolName || 'tool'} · answers ${turn.toolCallId || '?'}`
        : `#${turn.index} ${turn.role}`;
    item.append(element('div', 'role', head));
    if (turn.toolError) {
      const error = element('div');
      error.append(element('span', 'badge error', turn.toolError));
      item.append(error);
    }
    if (turn.content) item.append(element('div', 'text', turn.content));
    for (const call of turn.toolCalls || []) {
      const box = element('div', 'tool-call');
      box.append(element('span', 'muted', 'call'), ' ', element('b', '', call.name), ' ');
      box.append(element('pre', '', call.arguments));
      item.append(box);
    }
    return item;
  }

  function columnFor(summary, links) {
    const column = element('article', 'trajectory-column');
    column.dataset.trajectory = summary.id;
    column.dataset.lastIndex = '-1';
    const title = element('h3');
    const link = element('a', '', summary.id.slice(0, 8));
    link.href = links.trajectory.replace('TRAJECTORY', encodeURIComponent(summary.id));
    title.append(link, ' ');
    const status = element('span', 'status');
    status.append(element('span', `badge ${summary.status}`, summary.status));
    title.append(status);
    column.append(title, element('ol', 'turns'));
    return column;
  }

  function applyUpdate(update, links) {
    const grid = document.querySelector('.group-columns');
    for (const summary of update.trajectories) {
      let column = document.querySelector(`[data-trajectory="${CSS.escape(summary.id)}"]`);
      if (!column && grid) {
        column = columnFor(summary, links);
        const placeholder = grid.querySelector('.placeholder');
        if (placeholder) placeholder.replaceWith(column);
        else grid.append(column);
      }
      if (!column) continue;
      const badge = column.querySelector('.status .badge');
      if (badge && badge.textContent !== summary.status) {
        badge.className = `badge ${summary.status}`;
        badge.textContent = summary.status;
      }
      const cells = {
        '.turn-count': summary.turnCount,
        '.reward-verifier': fixed(summary.verifierReward, 3),
        '.reward-judge': fixed(summary.judgeScore, 3),
        '.reward-final': fixed(summary.finalReward, 3),
      };
      for (const [selector, value] of Object.entries(cells)) {
        const cell = column.querySelector(selector);
        if (cell) cell.textContent = String(value);
      }
    }
    for (const turn of update.turns) {
      const column = document.querySelector(`[data-trajectory="${CSS.escape(turn.trajectoryId)}"]`);
      if (!column || Number(column.dataset.lastIndex) >= turn.index) continue;
      column.querySelector('ol.turns').append(turnItem(turn));
      column.dataset.lastIndex = String(turn.index);
    }
    const status = document.querySelector('.group-status .badge');
    if (status && status.textContent !== update.group.status) {
      status.className = `badge ${update.group.status}`;
      status.textContent = update.group.status;
    }
  }

  function followGroup() {
    const box = document.querySelector('[data-live-group]');
    if (!box) return;
    const url = box.dataset.liveUrl;
    const pollMs = Math.max(100, Number(box.dataset.pollMs) || 1000);
    const links = { trajectory: box.dataset.trajectoryLink || '' };
    let polls = 0;
    const poll = async () => {
      const after = {};
      for (const column of document.querySelectorAll('[data-trajectory]')) {
        after[column.dataset.trajectory] = Number(column.dataset.lastIndex);
      }
      let running = true;
      try {
        const response = await fetch(`${url}?after=${encodeURIComponent(JSON.stringify(after))}`, {
          headers: { accept: 'application/json' },
          credentials: 'same-origin',
        });
        if (!response.ok) throw new Error(`the server answered ${response.status}`);
        const update = await response.json();
        applyUpdate(update, links);
        polls += 1;
        box.dataset.polls = String(polls);
        running = update.group.status === 'running';
        if (!running)
          box.textContent = `The group is ${update.group.status} now: reload for the judge's notes and advantages.`;
      } catch (error) {
        box.textContent = `Live updates paused (${error.message}); trying again.`;
      }
      if (running) setTimeout(poll, pollMs);
    };
    setTimeout(poll, pollMs);
  }

  function start() {
    drawCharts();
    followGroup();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
