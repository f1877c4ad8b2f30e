// The real `edgerl` CLI (bin/edgerl.js) as a child process that ends on its own: its exit code and
// everything it printed. For commands that run to completion (demo, rollout); servers have spawn-edge.ts.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

export const edgerlBin = resolve(import.meta.dirname, '../../bin/edgerl.js');

export interface EdgerlRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runEdgerl(
  args: readonly string[],
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<EdgerlRun> {
  const child = spawn(process.execPath, [edgerlBin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: options.env ?? process.env,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}
