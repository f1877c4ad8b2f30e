// Starts `node bin/edgerl.js console --port 0 …` as a child process and waits for the URL it prints.
// `stop` ends it with SIGTERM (its clean stop) and waits for it to exit, so the embedded store's
// directory is free for the test to open afterwards.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

export interface SpawnedConsole {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  output(): string;
  stop(): Promise<number | null>;
}

export async function spawnConsole(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  timeoutMs = 60_000,
): Promise<SpawnedConsole> {
  const child = spawn(process.execPath, ['bin/edgerl.js', 'console', '--port', '0', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      EDGE_API_KEYS: '',
      EDGERL_EDGE_API_KEYS: '',
      DATABASE_URL: '',
      INFERENCE_REPLICAS: '',
      EDGERL_INFERENCE_REPLICAS: '',
      ...env,
    },
  });
  child.stdin.end();
  let output = '';
  const append = (chunk: unknown) => {
    output += String(chunk);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`edgerl console printed no URL in time; output: ${output}`)),
      timeoutMs,
    );
    child.stdout.on('data', () => {
      const match = /edgerl console: (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`edgerl console exited (${code}) before printing its URL; output: ${output}`));
    });
  });
  return {
    child,
    url,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
