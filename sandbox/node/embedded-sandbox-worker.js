// The embedded SQL sandbox's worker thread: one PGlite instance, driven by messages from the host
// (embedded-read-only-sql.ts, which holds every rule; this file only executes). Plain JavaScript that
// imports only PGlite and node:worker_threads: a worker thread starts with a fresh module loader,
// without vitest's transform or the tsx hooks bin/edgerl.js registers, so a .ts entry (or one that
// imports our .ts files) would load under one runner and not the other.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

/** @type {{ dump?: ArrayBuffer, username?: string, textTypeIds: number[] }} */
const { dump, username, textTypeIds } = workerData;
/** Types the host parses itself (protocol/sql-value-parsers.ts) arrive as the server's text. */
const parsers = Object.fromEntries(textTypeIds.map((id) => [id, (text) => text]));

const db = new PGlite({
  ...(dump ? { loadDataDir: new Blob([dump]) } : {}),
  ...(username ? { username } : {}),
});
await db.waitReady;
parentPort.postMessage({ kind: 'ready' });

parentPort.on('message', async (message) => {
  const { id } = message;
  try {
    if (message.op === 'exec') {
      await db.exec(message.sql);
      parentPort.postMessage({ kind: 'reply', id, fields: [], rows: [] });
    } else if (message.op === 'query') {
      const result = await db.query(message.sql, message.params, { rowMode: 'array', parsers });
      const fields = result.fields.map((field) => ({ name: field.name, typeId: field.dataTypeID }));
      parentPort.postMessage({ kind: 'reply', id, fields, rows: result.rows });
    } else if (message.op === 'dump') {
      const bytes = await (await db.dumpDataDir('none')).arrayBuffer();
      parentPort.postMessage({ kind: 'reply', id, dump: bytes }, [bytes]);
    } else {
      throw new Error(`unknown op ${String(message.op)}`);
    }
  } catch (error) {
    const code = typeof error?.code === 'string' ? error.code : undefined;
    parentPort.postMessage({ kind: 'failed', id, code, message: String(error?.message ?? error) });
  }
});
