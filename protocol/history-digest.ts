// The history digest: a hash chain over the conversation as the recording proxy compares it, so a
// proxied request's history is checked against one stored value instead of every stored turn.
//   digest(-1) = '' (no bytes)
//   digest(n)  = hex(SHA-256(bytes(digest(n-1)) ‖ UTF-8(entry(turn n))))
// where bytes() reads the hex back and entry() is the canonical JSON (canonical-json.ts) of exactly
// what the proxy's comparison looks at (edge/proxy/new-messages.ts): the role, the text (null and ''
// alike) and, for a tool result, its call id. The store computes the same chain in SQL as it appends
// (sha256() and convert_to(), Postgres manual 9.5 "Binary String Functions"), so the entry text must
// be storable: JSON.stringify writes NUL and lone surrogates as \u escapes, so it always is, and the
// digest covers the original text, never the store's escaped form (stored-text.ts).
// Synchronous: sha256.ts, in JavaScript and Worker-safe (why not Web Crypto: see there), or the
// runtime's native SHA-256 where the process's entry installed one (the Node edge: node:crypto's).
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { canonicalJson } from './canonical-json.ts';
import { sha256 } from './sha256.ts';

/** What of one turn or message the history comparison (and so the digest) covers. */
export interface HistoryEntryView {
  readonly role: string;
  readonly content: string | null | undefined;
  /** Compared for tool results only. */
  readonly toolCallId?: string | null | undefined;
}

/** The digest before any turn. */
export const emptyHistoryDigest = '';

export function historyEntry(view: HistoryEntryView): string {
  const content = view.content ?? '';
  return view.role === 'tool'
    ? canonicalJson({ role: view.role, content, toolCallId: view.toolCallId ?? null })
    : canonicalJson({ role: view.role, content });
}

/** digest(i) for each entry i, chained from `previous` (the digest of the turns before the first). */
export function historyDigests(entries: readonly string[], previous: string = emptyHistoryDigest): string[] {
  const encoder = new TextEncoder();
  const digests: string[] = [];
  let last = fromHex(previous);
  for (const entry of entries) {
    const text = encoder.encode(entry);
    const input = new Uint8Array(last.length + text.length);
    input.set(last, 0);
    input.set(text, last.length);
    last = sha256(input);
    digests.push(bytesToHex(last));
  }
  return digests;
}

/** Lowercase hex only, as the chain writes it (noble's hexToBytes would take uppercase too). */
function fromHex(hex: string): Uint8Array {
  if (!/^(?:[0-9a-f]{2})*$/.test(hex)) throw new TypeError('historyDigests: previous is not a hex digest');
  return hexToBytes(hex);
}
