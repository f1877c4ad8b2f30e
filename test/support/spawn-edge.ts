// Starts `node bin/edgerl.js edge …` as a child process (loopback, port 0) and waits for the URL it
// prints. The caller stops it (SIGINT for a clean stop, SIGKILL in afterAll); nothing here kills it.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

export interface SpawnedEdge {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  /** Everything it has written to stdout and stderr so far. */
  output(): string;
}

/**
 * `args` follow `edge --port 0`; EDGERL_EDGE_API_KEYS and DATABASE_URL are cleared so only the flags count;
 * `env` adds variables (settings without a flag, such as EDGERL_EPISODE_LEASE_SECONDS).
 */
export async function spawnEdge(
  args: readonly string[],
  timeoutMs = 60_000,
  env: Readonly<Record<string, string>> = {},
): Promise<SpawnedEdge> {
  const child = spawn(process.execPath, ['bin/edgerl.js', 'edge', '--port', '0', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, EDGE_API_KEYS: '', EDGERL_EDGE_API_KEYS: '', DATABASE_URL: '', ...env },
  });
  child.stdin.end();
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    output += String(chunk);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL in time; output: ${output}`)), timeoutMs);
    child.stdout.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`exited early: ${output}`));
    });
  });
  return { child, url, output: () => output };
}
