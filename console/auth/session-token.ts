// The console's session cookie and CSRF token, both HMAC-SHA256 (RFC 2104) under the API key that
// signed the browser in, so the cookie never holds the key itself and every isolate of a Worker can
// check it without shared state: cookie = `<expiry>.<HMAC(key, "session:" expiry)>`, CSRF token =
// HMAC(key, "csrf:" cookie) (OWASP's HMAC-based synchronizer token, bound to the session). Rotating
// the key ends every session. Web Crypto only: runs in Workers and Node alike. Presented API keys are
// checked by protocol/key-ring.ts, not here.
import { equalBytes } from '../../protocol/key-ring.ts';

const encoder = new TextEncoder();

/** A week, an edgerl choice: long enough for a debugging week, short enough that a copied cookie lapses. */
export const sessionSeconds = 7 * 24 * 60 * 60;

async function hmac(secret: string, message: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(message)));
}

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** Equal strings in time that depends on the length only (tokens here have a fixed length). */
export function equalText(a: string, b: string): boolean {
  return equalBytes(encoder.encode(a), encoder.encode(b));
}

/** A cookie value for a browser signed in with `key`, valid until `nowSeconds + sessionSeconds`. */
export async function issueSession(key: string, nowSeconds: number): Promise<string> {
  const expires = Math.floor(nowSeconds) + sessionSeconds;
  return `${expires}.${base64url(await hmac(key, `edgerl-console:session:${expires}`))}`;
}

/** The key that signed `cookie`, when one of `keys` did and it has not expired; every key is tried. */
export async function verifySession(
  keys: readonly string[],
  cookie: string,
  nowSeconds: number,
): Promise<string | undefined> {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(cookie);
  if (!match) return undefined;
  const expires = Number(match[1]);
  if (!(expires > nowSeconds)) return undefined;
  let signer: string | undefined;
  for (const key of keys) {
    const expected = base64url(await hmac(key, `edgerl-console:session:${expires}`));
    if (equalText(expected, match[2] as string) && signer === undefined) signer = key;
  }
  return signer;
}

/** The CSRF token of a session: what forms carry back, checked by `equalText`. */
export async function csrfToken(secret: string, session: string): Promise<string> {
  return base64url(await hmac(secret, `edgerl-console:csrf:${session}`));
}

/** 32 random bytes, for a console that signs nobody in (its CSRF secret lives as long as the process). */
export function randomSecret(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}
