// `edgerl serve-model` as a user runs it: a child process on a free port that serves the adapters
// found under --adapters, answers until SIGTERM and then exits cleanly; bad flags exit with status 2.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { useBackend } from '../support/model-fixtures.ts';
import { initModelDir } from '../../model/init-model-dir.ts';
import { loadModel } from '../../model/policy-model.ts';

const bin = fileURLToPath(new URL('../../bin/edgerl.js', import.meta.url));

async function run(args: string[]): Promise<{ code: number; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (chunk) => (err += chunk));
  const code = await main(args, { stdout, stderr, env: {} });
  return { code, err };
}

/** Resolves with the first stdout line matching `pattern`. */
function waitForLine(child: ChildProcess, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) resolve(match);
    });
    child.once('exit', (code) =>
      reject(new Error(`exited with ${code} before printing ${pattern}: ${seen}`)),
    );
  });
}

describe('edgerl serve-model', () => {
  let dir: string;
  let modelDir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'edgerl-serve-cli-'));
    modelDir = join(dir, 'model');
    await initModelDir(modelDir, { preset: 'tiny', architecture: 'qwen2', seed: 1, dtype: 'F32' });
    await useBackend('wasm');
    const model = await loadModel(modelDir);
    model.addAdapter('policy-v1', { initLoraWeights: false }, { seed: 3 });
    await model.saveAdapter('policy-v1', join(dir, 'adapters', 'policy-v1'));
    model.dispose();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('rejects missing and bad flags with exit status 2', async () => {
    expect(await run(['serve-model'])).toEqual({
      code: 2,
      err: 'edgerl serve-model: --model DIR is required\n',
    });
    const port = await run(['serve-model', '--model', modelDir, '--port', '70000']);
    expect(port.code).toBe(2);
    expect(port.err).toMatch(/--port must be an integer between 0 and 65535, got 70000/);
  });

  it('serves the model and the --adapters directory until SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'serve-model', '--model', modelDir, '--adapters', join(dir, 'adapters'), '--port', '0'],
      { env: { ...process.env, EDGERL_BACKEND: 'wasm' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const [, url] = await waitForLine(child, /on (http:\/\/127\.0\.0\.1:\d+)\/v1\n/);
      const models = (await (await fetch(`${url}/v1/models`)).json()) as {
        data: { id: string; parent: string }[];
      };
      expect(models.data.map((m) => [m.id, m.parent])).toEqual([
        [modelDir, null],
        ['policy-v1', modelDir],
      ]);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
