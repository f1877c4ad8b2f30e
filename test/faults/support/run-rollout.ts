// The real `edgerl rollout` as a child process (node bin/edgerl.js) against a test edge: its exit
// code and output. The child ends on its own (its --timeout bounds the wait); nothing else is started.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { testApiKey } from '../../edge/support/edge-harness.ts';

/** Runs `edgerl rollout` as its own process against the harness edge. */
export async function runRollout(
  edgeUrl: string,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['bin/edgerl.js', 'rollout', '--url', edgeUrl, '--interval', '50', '--timeout', '120', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, EDGE_API_KEY: testApiKey } },
  );
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
