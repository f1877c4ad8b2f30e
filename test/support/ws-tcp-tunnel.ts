// A WebSocket-to-TCP tunnel for tests: lets the Neon serverless driver (which speaks Postgres over a
// WebSocket) reach a plain local Postgres server, as Neon's own proxy does in production. The target
// comes from the `address=host:port` query parameter, loopback only.
import { connect } from 'node:net';
import { WebSocketServer } from 'ws';

export interface Tunnel {
  /** `host:port` of the tunnel, for neonConfig.wsProxy. */
  readonly address: string;
  close(): Promise<void>;
}

export async function startWsTcpTunnel(): Promise<Tunnel> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  server.on('connection', (socket, request) => {
    const target = new URL(request.url ?? '/', 'ws://tunnel').searchParams.get('address') ?? '';
    const match = /^(127\.0\.0\.1|localhost|\[::1\]):(\d+)$/.exec(target);
    if (!match) {
      socket.close(1008, 'loopback targets only');
      return;
    }
    const tcp = connect(Number(match[2]), match[1] === 'localhost' ? '127.0.0.1' : (match[1] as string));
    const pending: Buffer[] = [];
    tcp.on('connect', () => {
      for (const chunk of pending.splice(0)) tcp.write(chunk);
    });
    socket.on('message', (data: Buffer) => {
      if (tcp.connecting) pending.push(data);
      else tcp.write(data);
    });
    tcp.on('data', (chunk) => socket.send(chunk));
    const closeBoth = () => {
      tcp.destroy();
      socket.terminate();
    };
    socket.on('close', closeBoth);
    socket.on('error', closeBoth);
    tcp.on('close', closeBoth);
    tcp.on('error', closeBoth);
  });
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
