// The static export of a seeded store: every page links only to files the export holds, loads no
// network asset, carries the charts' data for every recorded step, and shows no action.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleSeed, seedConsoleStore } from '../../test/support/seed-console.ts';
import { openTestStore, type TestStore } from '../../test/support/open-test-store.ts';
import type { ChartData } from '../data/chart-series.ts';
import { exportConsole, type ExportResult } from './export-console.ts';

let test: TestStore;
let seed: ConsoleSeed;
const files = new Map<string, string>();
let result: ExportResult;

beforeAll(async () => {
  test = await openTestStore();
  seed = await seedConsoleStore(test.store);
  result = await exportConsole(test.store, {
    write: async (name, body) => {
      files.set(name, body);
    },
  });
});
afterAll(() => test?.close());

const pages = () => [...files.entries()].filter(([name]) => name.endsWith('.html'));

describe('exportConsole', () => {
  it('writes a page for every run, group, experiment and linked trajectory', () => {
    expect(result.files).toBe(files.size);
    expect(result).toMatchObject({ runs: 2, groups: seed.groups.length + 1, experiments: 1 });
    for (const run of seed.runs) expect(files.has(`run-${run.id}.html`)).toBe(true);
    for (const group of seed.groups) expect(files.has(`group-${group.id}.html`)).toBe(true);
    expect(files.has('compare-agent_1-agent_2.html')).toBe(true);
    expect(files.has(`trajectory-${seed.hostileTrajectoryId}.html`)).toBe(true);
  });

  it('links only to files it wrote, and loads nothing from the network', () => {
    for (const [name, body] of pages()) {
      // `data:,` is the empty favicon: it keeps the browser from asking for /favicon.ico.
      for (const match of body.matchAll(/(?:href|src)="(?!data:)([^"]*)"/g)) {
        const target = (match[1] as string).replace(/&amp;/g, '&');
        expect(target, `${name} links to ${target}`).not.toMatch(/^(?:https?:)?\/\//);
        expect(files.has(target), `${name} links to ${target}`).toBe(true);
      }
      expect(body).not.toContain('<form');
    }
  });

  it('carries every step of a run in its charts, in ascending step order', () => {
    const [run1] = seed.runs;
    const page = files.get(`run-${run1?.id}.html`) ?? '';
    const block =
      /<script type="application\/json" id="chart-reward">([^<]*)<\/script>/.exec(page)?.[1] ?? '';
    const chart = JSON.parse(block) as ChartData;
    expect(chart.x).toEqual(run1?.steps);
    expect(chart.points).toBe(run1?.steps.length);
  });
});
