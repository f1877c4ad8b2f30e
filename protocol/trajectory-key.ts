// A client trajectory's key (docs/edge.md, "Who writes a trajectory"): `<trajectory id>.<secret>`,
// the secret 32 random bytes in base64url (RFC 4648 §5), from crypto.getRandomValues, which Workers
// and Node both have. The edge keeps only the key's SHA-256 (FIPS 180-4) in hex, never the key; the
// key names its trajectory, so one value is both the address and the credential. Leaves out where a
// key is presented (the proxy's header, the /t/<key>/ URL: edge/routes/).
import { bytesToHex } from '@noble/hashes/utils.js';
import { isUuidLike } from './is-uuid-like.ts';
import { sha256 } from './sha256.ts';

/** Random bytes in a key's secret: 256 bits, past guessing. */
export const trajectoryKeySecretBytes = 32;

/** A key's secret as presented: base64url characters, bounded. */
const secretPattern = /^[A-Za-z0-9_-]{1,200}$/;

/** What a presented `x-edgerl-trajectory` value or `/t/<key>/` segment names. */
export interface TrajectoryCredential {
  readonly trajectoryId: string;
  /** The presented key's digest; absent when only the id was sent. */
  readonly keyDigest?: string;
}

/** A new key for the trajectory `trajectoryId` and the digest the store keeps of it. */
export function newTrajectoryKey(trajectoryId: string): { key: string; keyDigest: string } {
  const secret = new Uint8Array(trajectoryKeySecretBytes);
  crypto.getRandomValues(secret);
  const key = `${trajectoryId.toLowerCase()}.${base64url(secret)}`;
  return { key, keyDigest: trajectoryKeyDigest(key) };
}

/** The hex SHA-256 of a key's UTF-8 bytes: what the store compares. */
export function trajectoryKeyDigest(key: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(key)));
}

/**
 * Reads a presented id or key; undefined when it is neither. A trajectory id alone (a keyless
 * trajectory's, opened before keys), or a key: the id, a dot, a secret.
 */
export function readTrajectoryCredential(value: string): TrajectoryCredential | undefined {
  const [id = '', secret, ...rest] = value.trim().split('.');
  if (!isUuidLike(id) || rest.length > 0) return undefined;
  const trajectoryId = id.toLowerCase();
  if (secret === undefined) return { trajectoryId };
  if (!secretPattern.test(secret)) return undefined;
  return { trajectoryId, keyDigest: trajectoryKeyDigest(`${trajectoryId}.${secret}`) };
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}
