// `edgerl edge`'s usage and flag checks, from its two schemas (the edge config's variables and the
// Node process's own flags): each flag listed with its default, and bad values refused (exit 2) before
// any store or server starts.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { edgeConfigFields } from '../../edge/edge-config.ts';
import { configFields } from '../../protocol/config-docs.ts';
import { main } from '../main.ts';
import { formatDefault } from '../flags/config-usage.ts';
import { edgeCommand, edgeNodeSchema } from './edge.ts';

async function run(args: string[], env: Record<string, string> = {}) {
  let err = '';
  const stderr = new Writable({
    write(chunk, _encoding, done) {
      err += String(chunk);
      done();
    },
  });
  const stdout = new Writable({ write: (_chunk, _encoding, done) => done() });
  const code = await main(['edge', ...args], { stdout, stderr, env });
  return { code, err };
}

describe('edgerl edge usage', () => {
  const fields = [...configFields(edgeNodeSchema), ...edgeConfigFields];

  it('lists every flag with its variable and default', () => {
    const usage = edgeCommand.usage.replace(/\n {3,}/g, ' ');
    for (const { doc, defaultValue } of fields) {
      if (doc.flag) {
        const line = usage.split('\n').find((text) => text.startsWith(`  --${doc.flag} `));
        expect(line, doc.flag).toBeDefined();
        if (doc.env) expect(line).toContain(`or ${doc.env}`);
        if (doc.arg && defaultValue !== undefined)
          expect(line).toContain(`default ${formatDefault(defaultValue)})`);
      } else {
        expect(usage).toMatch(new RegExp(`^ {2}${doc.env} `, 'm'));
      }
    }
    // Spot checks against the values documented in docs/edge.md.
    expect(usage).toMatch(/--concurrency N .*default 8\)/);
    expect(usage).toMatch(/EDGERL_INFERENCE_TIMEOUT_MS .*default 120000\)/);
    expect(usage).toMatch(/--port N .*default 8787\)/);
  });
});

describe('edgerl edge flags', () => {
  it('refuses a bad port, naming the flag and the range', async () => {
    expect(await run(['--port', '70000'])).toEqual({
      code: 2,
      err: 'edgerl edge: --port must be an integer between 0 and 65535, got 70000\n',
    });
    expect(await run(['--port', 'x'])).toEqual({
      code: 2,
      err: 'edgerl edge: --port must be a number, got "x"\n',
    });
  });

  it('refuses bad edge settings from flags or variables, naming the variable', async () => {
    const flag = await run(['--concurrency', '0', '--inference-url', 'localhost']);
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/EDGERL_EPISODE_CONCURRENCY must be a positive integer, got "0"/);
    expect(flag.err).toMatch(/EDGERL_INFERENCE_URL must be an http\(s\) URL .*, got "localhost"/);
    const variable = await run([], { EDGERL_INFERENCE_TIMEOUT_MS: 'soon' });
    expect(variable.code).toBe(2);
    expect(variable.err).toMatch(/EDGERL_INFERENCE_TIMEOUT_MS must be a positive integer, got "soon"/);
  });

  it('reads a repeated --inference-url as the fleet, each replica checked', async () => {
    const repeated = await run(['--inference-url', 'http://a:8000/v1', '--inference-url', 'http://b:8000']);
    expect(repeated.code).toBe(2);
    expect(repeated.err).toMatch(/EDGERL_INFERENCE_REPLICAS must end in \/v1 .*got "http:\/\/b:8000"/);
  });

  it('still reads a former variable, in one line naming its current name', async () => {
    const former = await run([], { INFERENCE_TIMEOUT_MS: 'soon' });
    expect(former.code).toBe(2);
    expect(former.err).toMatch(
      /^edgerl edge: deprecated names, still read for now: INFERENCE_TIMEOUT_MS → EDGERL_INFERENCE_TIMEOUT_MS\nedgerl edge: [^\n]*EDGERL_INFERENCE_TIMEOUT_MS must be a positive integer, got "soon"/,
    );
  });
});
