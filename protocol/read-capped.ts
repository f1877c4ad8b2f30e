// Reads a response body up to a byte cap: past it the body is cancelled (the sender's connection is
// let go) and the caller gets only the size read so far, so a hostile or runaway upstream cannot
// make the reader hold more than the cap. fetch only (Worker-safe); decoding is the caller's.

export type CappedBody =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly bytesRead: number; readonly maxBytes: number };

export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<CappedBody> {
  if (!body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Cancelling (not merely dropping the reader) closes the upstream connection at once.
      await reader.cancel(new Error(`body larger than ${maxBytes} bytes`)).catch(() => {});
      return { ok: false, bytesRead: total, maxBytes };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { ok: true, bytes };
}
