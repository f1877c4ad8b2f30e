// SHA-256, synchronous and Worker-safe: @noble/hashes' audited pure-JavaScript sha256
// (https://github.com/paulmillr/noble-hashes), which replaced a hand-written FIPS 180-4 one: about 3 to 6
// times faster on 0.2–64 kB messages (Node 22, measured side by side in one run). Why not Web Crypto: crypto.subtle.digest is asynchronous, and in Node
// each call is a job on the libuv thread pool, so the history digest's one hash per message cost ~100 µs each
// (a 2,000-message request took longer to digest than reading and comparing 2,000 stored turns). Checked
// against Postgres's sha256() by the store tests and against the standard's examples by sha256.test.ts.
// `sha256` is the one the process uses: this JavaScript one, unless the runtime's entry installs a native one
// with useSha256 (the Node edge: node:crypto's, edge/runtime/node-sha256.ts); both give the same bytes.
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

/** A SHA-256 of a whole message, synchronous: this module's, or a runtime's native one. */
export type Sha256 = (message: Uint8Array) => Uint8Array;

let installed: Sha256 | undefined;

/**
 * Sets the SHA-256 `sha256` computes with, for the whole process: called once at a runtime's entry,
 * before any digest. Any correct implementation gives the same digests; the choice is only speed.
 */
export function useSha256(implementation: Sha256): void {
  installed = implementation;
}

/** SHA-256 of `message` with the process's implementation (the JavaScript one unless one was installed). */
export function sha256(message: Uint8Array): Uint8Array {
  return (installed ?? javascriptSha256)(message);
}

/** FIPS 180-4 SHA-256 in JavaScript, for runtimes without a synchronous native one (Workers). */
export const javascriptSha256: Sha256 = (message) => nobleSha256(message);
