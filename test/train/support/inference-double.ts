// TEST DOUBLE: a stand-in for a vLLM-compatible inference server's adapter routes, to provoke the
// failures a real server rarely gives on demand. A real HTTP server on 127.0.0.1 (free port) answering
// GET /v1/models, POST /v1/load_lora_adapter and POST /v1/chat/completions as scripted; any other call
// is answered 500 and remembered, so `verify()` fails the test. Not a model: it never generates.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface InferenceDoubleScript {
  /** Whether a loaded adapter then appears in GET /v1/models (default true). */
  readonly listLoaded?: boolean;
  /** Status and body for load_lora_adapter (default 200, "Success"). */
  readonly load?: { readonly status: number; readonly body: unknown };
  /** Status and body for the probe completion (default 200 with one choice). */
  readonly probe?: { readonly status: number; readonly body: unknown };
}

export interface InferenceDouble {
  /** `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string;
  readonly calls: { method: string; path: string; body: unknown }[];
  readonly problems: string[];
  verify(): void;
  close(): Promise<void>;
}

export async function startInferenceDouble(script: InferenceDoubleScript = {}): Promise<InferenceDouble> {
  const loaded: string[] = [];
  const calls: InferenceDouble['calls'] = [];
  const problems: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body: unknown = text ? JSON.parse(text) : undefined;
      const key = `${req.method} ${req.url}`;
      calls.push({ method: req.method ?? '', path: req.url ?? '', body });
      switch (key) {
        case 'GET /v1/models':
          return send(res, 200, {
            object: 'list',
            data: [{ id: 'base' }, ...(script.listLoaded === false ? [] : loaded.map((id) => ({ id })))],
          });
        case 'POST /v1/load_lora_adapter': {
          const reply = script.load ?? { status: 200, body: 'Success: LoRA adapter added successfully.' };
          if (reply.status === 200) loaded.push(String((body as { lora_name?: unknown }).lora_name));
          return send(res, reply.status, reply.body);
        }
        case 'POST /v1/chat/completions': {
          const reply = script.probe ?? {
            status: 200,
            body: {
              object: 'chat.completion',
              choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }],
            },
          };
          return send(res, reply.status, reply.body);
        }
        default:
          problems.push(`unexpected ${key}`);
          return send(res, 500, { error: { message: `inference double: unexpected ${key}` } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    problems,
    verify() {
      if (problems.length > 0) throw new Error(`inference double: ${problems.join('; ')}`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (typeof body === 'string') {
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(body);
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
