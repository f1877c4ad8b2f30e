// The edge's two commands: `edgerl rollout` against a running Node edge (start groups, follow them
// to the end), and `edgerl edge` as a real process (starts, serves, stops cleanly on SIGINT).
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { spawnEdge } from '../support/spawn-edge.ts';
import { type EdgeHarness, startEdgeHarness, testApiKey } from './support/edge-harness.ts';

function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('edgerl rollout', () => {
  it('starts groups and follows them to the end', async () => {
    const out = capture();
    const err = capture();
    const code = await main(
      [
        'rollout',
        '--env',
        'multi-hop',
        '--groups',
        '2',
        '--size',
        '2',
        '--url',
        h.edge.url,
        '--interval',
        '20',
      ],
      { stdout: out.stream, stderr: err.stream, env: { EDGE_API_KEY: testApiKey } },
    );
    // The former names still work, and say so in one line (protocol/config-renames.ts).
    expect(err.text()).toBe(
      'edgerl rollout: deprecated names, still read for now: EDGE_API_KEY → EDGERL_EDGE_API_KEY, --url → --edge-url\n',
    );
    expect(code).toBe(0);
    const text = out.text();
    expect(text.match(/^started group [0-9a-f-]{36} \(2 × multi-hop, model tiny-base\)$/gm)).toHaveLength(2);
    // The double is a perfect agent: every episode earns 1.
    expect(text.match(/^group [0-9a-f-]{36}: complete, mean verifier reward 1\.000 over 2$/gm)).toHaveLength(
      2,
    );
  });

  it('prints one JSON document with --json, the progress on stderr', async () => {
    const out = capture();
    const err = capture();
    const code = await main(
      [
        'rollout',
        '--env',
        'multi-hop',
        '--size',
        '2',
        '--edge-url',
        h.edge.url,
        '--interval',
        '20',
        '--json',
      ],
      { stdout: out.stream, stderr: err.stream, env: { EDGERL_EDGE_API_KEY: testApiKey } },
    );
    expect(code).toBe(0);
    expect(err.text()).toMatch(/^started group /);
    const report = JSON.parse(out.text());
    expect(report).toMatchObject({ episodes: 2, erroredEpisodes: 0, firstErrorReason: null });
    expect(report.groups).toHaveLength(1);
    const [group] = report.groups;
    expect(group).toMatchObject({ model: 'tiny-base', arm: null, status: 'complete', timedOut: false });
    expect(group.meanVerifierReward).toBe(1);
    expect(group.trajectories).toHaveLength(2);
    for (const trajectory of group.trajectories) {
      expect(trajectory).toMatchObject({ status: 'finished', verifierReward: 1, errorReason: null });
      expect(trajectory.id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('explains bad flags and API errors', async () => {
    const run = async (args: string[], env: Record<string, string> = { EDGERL_EDGE_API_KEY: testApiKey }) => {
      const err = capture();
      const code = await main(['rollout', ...args, '--edge-url', h.edge.url], {
        stdout: capture().stream,
        stderr: err.stream,
        env,
      });
      return { code, message: err.text() };
    };
    expect(await run([])).toEqual({ code: 2, message: 'edgerl rollout: --env NAME is required\n' });
    expect((await run(['--env', 'x', '--policy', 'a', '--experiment', 'b'])).code).toBe(2);
    expect((await run(['--env', 'multi-hop'], {})).message).toMatch(/no API key/);
    const unknown = await run(['--env', 'nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.message).toMatch(/HTTP 400: env: unknown environment "nope"/);
    const badKey = await run(['--env', 'multi-hop'], { EDGERL_EDGE_API_KEY: 'wrong' });
    expect(badKey.message).toMatch(/HTTP 401/);
  });
});

describe('edgerl edge', () => {
  it('serves the API in a process and stops on SIGINT', async () => {
    const { child, url, output } = await spawnEdge([
      '--database-url',
      'memory://',
      '--api-key',
      'cli-key',
      '--inference-url',
      h.double.baseUrl,
      '--default-model',
      'tiny-base',
    ]);
    expect(output()).toMatch(/store: memory:\/\/, pglite/);
    const started = await fetch(`${url}/v1/rollouts`, {
      method: 'POST',
      headers: { authorization: 'Bearer cli-key', 'content-type': 'application/json' },
      body: JSON.stringify({ env: 'multi-hop', groupSize: 1 }),
    });
    expect(started.status).toBe(202);
    // The embedded SQL sandbox starts with the first episode that requires sql: none ran here.
    expect(output()).not.toMatch(/SQL sandbox/);
    child.kill('SIGINT');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(output()).toMatch(/shutting down/);
  });
});
