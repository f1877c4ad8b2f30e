// A WebSocket-to-TCP tunnel for local development and tests: it lets the Neon serverless driver,
// which speaks the Postgres protocol over a WebSocket, reach a plain Postgres on this machine, as
// Neon's proxy does in production (the Worker reads its address from NEON_DEV_WS_PROXY).
// Loopback targets only, from the `address=host:port` query parameter. It closes both sides when
// the client sends the Postgres Terminate message ('X', length 4), because some servers
// (pglite-socket) keep the TCP connection open after it and a client waiting for the close would
// hang. Node-only; never part of the Worker bundle.
import { connect } from 'node:net';
import { WebSocketServer } from 'ws';

export interface DevTunnel {
  /** `host:port` of the tunnel (what NEON_DEV_WS_PROXY holds). */
  readonly address: string;
  close(): Promise<void>;
}

/** Default 127.0.0.1 and a free port. */
export async function startDevTunnel(options: { host?: string; port?: number } = {}): Promise<DevTunnel> {
  const server = new WebSocketServer({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  server.on('connection', (socket, request) => {
    const target = new URL(request.url ?? '/', 'ws://tunnel').searchParams.get('address') ?? '';
    const match = /^(127\.0\.0\.1|localhost|\[::1\]):(\d+)$/.exec(target);
    if (!match) {
      socket.close(1008, 'loopback targets only');
      return;
    }
    const host = match[1] === 'localhost' ? '127.0.0.1' : (match[1] as string).replace(/^\[|\]$/g, '');
    const tcp = connect(Number(match[2]), host);
    const watcher = terminateWatcher();
    const pending: Buffer[] = [];
    const closeBoth = () => {
      tcp.destroy();
      socket.terminate();
    };
    tcp.on('connect', () => {
      for (const chunk of pending.splice(0)) tcp.write(chunk);
    });
    socket.on('message', (data: Buffer) => {
      if (tcp.connecting) pending.push(data);
      else tcp.write(data);
      if (watcher(data)) tcp.end(() => closeBoth());
    });
    tcp.on('data', (chunk) => socket.send(chunk));
    socket.on('close', closeBoth);
    socket.on('error', closeBoth);
    tcp.on('close', closeBoth);
    tcp.on('error', closeBoth);
  });
  const { address, port } = server.address() as { address: string; port: number };
  return {
    address: `${address.includes(':') ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}

/** SSLRequest and GSSENCRequest codes (PostgreSQL protocol docs, "Message Formats"): untyped too. */
const negotiationCodes = new Set([80877103, 80877104]);

/**
 * Follows the client's side of the Postgres protocol across chunks: untyped start-up packets
 * (length, payload) until the StartupMessage, then typed messages (type byte, length, payload).
 * Returns true once a Terminate message has been seen.
 */
export function terminateWatcher(): (chunk: Uint8Array) => boolean {
  let buffered = new Uint8Array(0);
  let typed = false;
  let terminated = false;
  return (chunk) => {
    const joined = new Uint8Array(buffered.length + chunk.length);
    joined.set(buffered);
    joined.set(chunk, buffered.length);
    let offset = 0;
    const view = new DataView(joined.buffer);
    for (;;) {
      const header = typed ? 5 : 4;
      if (joined.length - offset < header) break;
      const length = view.getInt32(offset + (typed ? 1 : 0));
      const total = (typed ? 1 : 0) + length;
      if (length < 4 || joined.length - offset < total) break;
      if (typed) {
        if (joined[offset] === 0x58 /* 'X' */) terminated = true;
      } else if (!(length === 8 && negotiationCodes.has(view.getInt32(offset + 4)))) {
        typed = true;
      }
      offset += total;
    }
    buffered = joined.slice(offset);
    return terminated;
  };
}
