// SHA-256 (FIPS 180-4, "Secure Hash Standard", sections 4.1.2, 4.2.2, 5.1.1, 6.2), synchronous and
// Worker-safe. Why not Web Crypto: crypto.subtle.digest is asynchronous, and in Node each call is a
// job on the libuv thread pool, so the history digest's one hash per message cost ~100 µs each (a
// 2,000-message request took longer to digest than reading and comparing 2,000 stored turns). This
// runs in the caller's thread at memory speed. Checked against Postgres's sha256() by the store tests
// and against the standard's examples by sha256.test.ts. `sha256` is the one the process uses: this
// JavaScript one, unless the runtime's entry installs a native one with useSha256 (the Node edge:
// node:crypto's, edge/runtime/node-sha256.ts); both give the same bytes.

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

/** The first 32 bits of the fractional parts of the cube roots of the first 64 primes (4.2.2). */
const roundConstants = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** The first 32 bits of the fractional parts of the square roots of the first 8 primes (5.3.3). */
const initialHash = [
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** The message schedule, reused (sha256 is synchronous, so no two calls share it); Int32Array, as the
 * constants: int32 values stay small integers in V8 where uint32 ones above 2^31 would not. */
const schedule = new Int32Array(64);

/** FIPS 180-4 SHA-256 in JavaScript. */
export const javascriptSha256: Sha256 = (message) => {
  // Padding (5.1.1): a 1 bit, zeros, then the bit length as 64 bits, to a multiple of 512 bits.
  const blocks = Math.ceil((message.length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(message);
  padded[message.length] = 0x80;
  const bits = message.length * 8;
  const high = Math.floor(bits / 2 ** 32);
  const end = padded.length;
  padded[end - 8] = high >>> 24;
  padded[end - 7] = (high >>> 16) & 0xff;
  padded[end - 6] = (high >>> 8) & 0xff;
  padded[end - 5] = high & 0xff;
  padded[end - 4] = bits >>> 24;
  padded[end - 3] = (bits >>> 16) & 0xff;
  padded[end - 2] = (bits >>> 8) & 0xff;
  padded[end - 1] = bits & 0xff;
  let h0 = initialHash[0] as number;
  let h1 = initialHash[1] as number;
  let h2 = initialHash[2] as number;
  let h3 = initialHash[3] as number;
  let h4 = initialHash[4] as number;
  let h5 = initialHash[5] as number;
  let h6 = initialHash[6] as number;
  let h7 = initialHash[7] as number;
  const w = schedule;
  const k = roundConstants;
  for (let offset = 0; offset < end; offset += 64) {
    // The message schedule (6.2.2 step 1): big-endian words, then the expansion.
    for (let t = 0; t < 16; t++) {
      const at = offset + t * 4;
      w[t] =
        ((padded[at] as number) << 24) |
        ((padded[at + 1] as number) << 16) |
        ((padded[at + 2] as number) << 8) |
        (padded[at + 3] as number);
    }
    for (let t = 16; t < 64; t++) {
      const w15 = w[t - 15] as number;
      const w2 = w[t - 2] as number;
      const sigma0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
      const sigma1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
      w[t] = ((w[t - 16] as number) + sigma0 + (w[t - 7] as number) + sigma1) | 0;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let t = 0; t < 64; t++) {
      const sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const choose = (e & f) ^ (~e & g);
      const t1 = (h + sum1 + choose + (k[t] as number) + (w[t] as number)) | 0;
      const sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const majority = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (sum0 + majority) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  const out = new Uint8Array(32);
  [h0, h1, h2, h3, h4, h5, h6, h7].forEach((word, index) => {
    out[index * 4] = word >>> 24;
    out[index * 4 + 1] = (word >>> 16) & 0xff;
    out[index * 4 + 2] = (word >>> 8) & 0xff;
    out[index * 4 + 3] = word & 0xff;
  });
  return out;
};
