// Headless Chromium for the console's browser tests and screenshots: Debian's package at
// /usr/bin/chromium (or EDGERL_CHROMIUM), driven by playwright-core, which downloads no browser.
// `watch` collects what a page reports as wrong: console errors, uncaught exceptions, failed requests.
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

export const chromiumPath = process.env.EDGERL_CHROMIUM || '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `no Chromium at ${chromiumPath}: install Debian's package (apt-get install -y chromium, as .ci/run does) or set EDGERL_CHROMIUM`,
    );
  }
  // --no-sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
}

export interface PageProblems {
  readonly problems: string[];
}

/** Everything the page says went wrong, as lines (empty when nothing did). */
export function watch(page: Page): PageProblems {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      problems.push(`console ${message.type()}: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('requestfailed', (request) =>
    problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`),
  );
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  return { problems };
}

/** The charts console.js drew, read back from the page: each one's x values and its series' values. */
export async function drawnCharts(
  page: Page,
): Promise<{ id: string; x: number[]; series: (number | null)[][] }[]> {
  return page.evaluate(() => {
    const charts =
      (
        globalThis as unknown as {
          edgerlConsole?: { charts: { id: string; uplot: { data: (number | null)[][] } }[] };
        }
      ).edgerlConsole?.charts ?? [];
    return charts.map((chart) => ({
      id: chart.id,
      x: chart.uplot.data[0] as number[],
      series: chart.uplot.data.slice(1),
    }));
  });
}
