// `edgerl fleet catch-up` and `edgerl fleet status` as a user runs them, on an embedded store and the
// local inference endpoint: a published version the replica does not serve is loaded there and marked
// ready; a replica that cannot be reached makes the command exit 1 and say so; status prints the rows.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import { loadModel } from '../../model/policy-model.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { useWasm, writeTinyModelDir } from './support/tiny-policy.ts';

let root: string;
let dataDir: string;
let serving: ServingModel;

beforeAll(async () => {
  await useWasm();
  root = await mkdtemp(join(tmpdir(), 'edgerl-fleet-cli-'));
  const modelDir = join(root, 'model');
  dataDir = join(root, 'pgdata');
  await writeTinyModelDir(modelDir);
  const model = await loadModel(modelDir);
  model.addAdapter('p@1', { initLoraWeights: false }, { seed: 3 });
  await model.saveAdapter('p@1', join(root, 'adapters', 'p@1'));
  model.dispose();
  serving = await serveModel({ modelDir, servedModelName: 'tiny', port: 0, log: () => {} });
  const store = await openStore({ dataDir });
  try {
    const policy = await store.createPolicy({ name: 'p', baseModel: 'tiny' });
    const base = await store.registerPolicyVersion({ policyId: policy.id });
    await store.publishPolicyVersion({ versionId: base.id, makeDefault: true });
    const trained = await store.registerPolicyVersion({
      policyId: policy.id,
      adapterUri: join(root, 'adapters', 'p@1'),
    });
    await store.publishPolicyVersion({ versionId: trained.id });
  } finally {
    await store.close();
  }
}, 120_000);
afterAll(async () => {
  await serving?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => (out += chunk));
  stderr.on('data', (chunk) => (err += chunk));
  const code = await main(args, { stdout, stderr, env: {} });
  return { code, out, err };
}

describe('edgerl fleet', () => {
  it('catch-up loads what a replica lacks, says which replica it could not reach, and status shows the rows', async () => {
    const url = `${serving.url}/v1`;
    const dead = 'http://127.0.0.1:9/v1';
    expect(await run(['fleet', 'catch-up', '--data-dir', dataDir])).toMatchObject({ code: 2 });

    const first = await run(['fleet', 'catch-up', '--inference-url', url, '--data-dir', dataDir]);
    expect(first).toMatchObject({ code: 0, err: '' });
    expect(first.out).toBe(`catch-up: ${url}: loaded p@1\n1 replica(s) serve every published version now\n`);
    const models = (await (await fetch(`${url}/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((entry) => entry.id)).toContain('p@1');

    const again = await run([
      'fleet',
      'catch-up',
      '--inference-url',
      `${url},${dead}`,
      '--policy',
      'p',
      '--data-dir',
      dataDir,
    ]);
    expect(again.code).toBe(1);
    expect(again.out).toMatch(new RegExp(`^catch-up: ${dead.replaceAll('.', '\\.')} unreachable \\(`));
    expect(again.out).toMatch(/1 of 2 replica\(s\) are not caught up\n$/);

    const status = await run(['fleet', 'status', '--policy', 'p', '--data-dir', dataDir]);
    expect(status.code).toBe(0);
    const lines = status.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^version\s+replica\s+state\s+attempts\s+ready at\s+last error$/);
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/).slice(0, 4))).toEqual([
      ['p@1', url, 'ready', '1'],
    ]);

    // --json: the same rows as one JSON array; catch-up's reports likewise.
    const statusJson = await run(['fleet', 'status', '--policy', 'p', '--data-dir', dataDir, '--json']);
    expect(statusJson.code).toBe(0);
    const rows = JSON.parse(statusJson.out);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      version: 'p@1',
      replica: url,
      state: 'ready',
      attempts: 1,
      lastError: null,
    });
    expect(Date.parse(rows[0].readyAt)).not.toBeNaN();
    const catchUpJson = await run([
      'fleet',
      'catch-up',
      '--inference-url',
      url,
      '--data-dir',
      dataDir,
      '--json',
    ]);
    expect(catchUpJson.code).toBe(0);
    expect(JSON.parse(catchUpJson.out)).toEqual([{ replica: url, loaded: [], confirmed: [], failed: [] }]);
  }, 120_000);
});
