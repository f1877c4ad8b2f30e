// A real `edgerl serve-model` child process on a free port, for the fleet scenarios: started, read
// for the address it prints, and killed (SIGKILL, as a crashed or evicted replica dies). Test-only.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../../bin/edgerl.js', import.meta.url));

export interface ServeModelProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
}

export async function startServeModelProcess(
  modelDir: string,
  servedModelName: string,
  /** Extra environment, e.g. a fault hook (EDGERL_SERVE_FAULT: serve/serve-fault.ts). */
  env: Record<string, string> = {},
): Promise<ServeModelProcess> {
  const child = spawn(
    process.execPath,
    [bin, 'serve-model', '--model', modelDir, '--served-model-name', servedModelName, '--port', '0'],
    { env: { ...process.env, EDGERL_BACKEND: 'wasm', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`serve-model printed no address in 60 s: ${seen}`)),
      60_000,
    );
    const read = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = / on http:\/\/127\.0\.0\.1:(\d+)\/v1\n/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve-model exited with ${code} before listening: ${seen}`));
    });
  });
  return {
    child,
    port,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await gone;
    },
  };
}
