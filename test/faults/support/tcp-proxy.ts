// A TCP proxy on 127.0.0.1 (node:net) between a client and a server, for cutting the line on purpose:
// `cut()` destroys every live connection and stops listening (new connections are refused), `restore()`
// listens again on the same port. Test-only; it forwards bytes and understands nothing of them.
import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections made through it so far (each a pair of sockets). */
  readonly connections: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const live = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((inbound) => {
    connections += 1;
    const outbound = connect(target.port, target.host);
    for (const socket of [inbound, outbound]) {
      live.add(socket);
      socket.on('close', () => live.delete(socket));
      // A cut or a peer's reset ends both halves; the error itself is the point of the test.
      socket.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as AddressInfo;
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of live) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  return {
    port,
    get connections() {
      return connections;
    },
    cut: stop,
    restore: () => listen(port),
    close: stop,
  };
}
