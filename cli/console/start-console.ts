// Serves the console (console/console-server.ts) from Node over one open store: what `edgerl console`
// runs, and what the browser tests and the screenshot script start in-process on a seeded store.
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Store } from '../../db/store.ts';
import { clientAddress, nodePeerAddress } from '../../protocol/client-address.ts';
import { GuessLimiter } from '../../protocol/guess-limiter.ts';
import type { ConsoleAccess } from '../../console/console-env.ts';
import { createConsoleServer } from '../../console/console-server.ts';
import { defaultConsoleBase } from '../../console/console-app.ts';
import { defaultConsolePort } from './console-port.ts';

export interface StartConsoleOptions {
  readonly store: Store;
  readonly access: ConsoleAccess;
  /** Default 8788; 0 picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly hostname?: string;
  readonly fleet?: readonly string[];
  readonly tokenText?: (ids: readonly number[]) => readonly string[];
  readonly pollMs?: number;
  readonly logError?: (error: unknown) => void;
  /** Where wrong-key lines go (the guess limiter's; never the key); default console.warn. */
  readonly log?: (line: string) => void;
  /** The limiter's clock (tests); default Date.now. */
  readonly now?: () => number;
}

export interface RunningConsole {
  /** The console's home, e.g. `http://127.0.0.1:8788/console`. */
  readonly url: string;
  /** Stops listening; the store stays open (its owner closes it). */
  close(): Promise<void>;
}

export async function startConsole(options: StartConsoleOptions): Promise<RunningConsole> {
  const app = createConsoleServer({
    stores: { open: async () => ({ store: options.store, release: async () => {} }) },
    access: options.access,
    ...(options.fleet ? { fleet: options.fleet } : {}),
    ...(options.tokenText ? { tokenText: options.tokenText } : {}),
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    ...(options.logError ? { logError: options.logError } : {}),
    ...(options.now ? { now: options.now } : {}),
    limiter: new GuessLimiter({
      ...(options.log ? { log: options.log } : {}),
      ...(options.now ? { now: options.now } : {}),
    }),
    // The socket's peer: `edgerl console` trusts no forwarded header (docs/console.md, "Signing in").
    clientAddress: (c) =>
      clientAddress({ remote: nodePeerAddress(c.env), forwardedFor: undefined, trustedProxies: 0 }),
  });
  const hostname = options.hostname ?? '127.0.0.1';
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, port: options.port ?? defaultConsolePort, hostname }, () =>
      resolve(started),
    );
    started.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = hostname === '0.0.0.0' ? '127.0.0.1' : hostname.includes(':') ? `[${hostname}]` : hostname;
  return {
    url: `http://${host}:${port}${defaultConsoleBase}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive connections (a browser's) would hold close() open until they time out.
        if ('closeAllConnections' in server)
          (server as { closeAllConnections(): void }).closeAllConnections();
      }),
  };
}
