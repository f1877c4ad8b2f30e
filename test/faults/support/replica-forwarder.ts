// A stable address in front of one inference replica (a `serve-model` process), as a service address
// stands in front of a pod: it forwards each HTTP request to the process behind it and counts the
// chat completions that reached it, by model, independently of the code under test. With no process
// behind it (killed, not yet restarted) it resets the connection, as a dead host does. A restarted
// process on a new port is put behind the same address with `target`. Test-only; buffers bodies.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReplicaForwarder {
  /** The replica's OpenAI base URL, e.g. `http://127.0.0.1:41234/v1`. */
  readonly url: string;
  /** Chat completions that reached the process behind, per model, since the start. */
  readonly completions: ReadonlyMap<string, number>;
  /** The port of the process behind it; undefined: nothing behind (connections are reset). */
  target(port: number | undefined): void;
  close(): Promise<void>;
}

export async function startReplicaForwarder(): Promise<ReplicaForwarder> {
  let target: number | undefined;
  const completions = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    void forward(request).then(
      async (upstream) => {
        response.writeHead(upstream.status, {
          'content-type': upstream.headers.get('content-type') ?? 'application/json',
        });
        response.end(Buffer.from(await upstream.arrayBuffer()));
      },
      () => request.socket.destroy(),
    );
  });
  async function forward(request: IncomingMessage): Promise<Response> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const port = target;
    if (port === undefined) throw new Error('no replica behind the forwarder');
    const upstream = await fetch(`http://127.0.0.1:${port}${request.url ?? '/'}`, {
      method: request.method ?? 'GET',
      headers: {
        ...(request.headers['content-type'] ? { 'content-type': request.headers['content-type'] } : {}),
        ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
      },
      ...(body.length > 0 ? { body } : {}),
    });
    if (request.method === 'POST' && request.url?.endsWith('/chat/completions')) {
      const model = String((JSON.parse(body.toString()) as { model?: unknown }).model);
      completions.set(model, (completions.get(model) ?? 0) + 1);
    }
    return upstream;
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    completions,
    target: (next) => {
      target = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
