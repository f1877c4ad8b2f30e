// Node's native SHA-256 (OpenSSL through node:crypto) as protocol/sha256.ts's Sha256, for the history
// digest and the API key check in Node: the Node entry (node.ts) installs it with useSha256. Workers
// keep the JavaScript one.
// Synchronous, in the calling thread (createHash, unlike crypto.subtle, queues no thread-pool job).
import { createHash } from 'node:crypto';
import type { Sha256 } from '../../protocol/sha256.ts';

export const nodeSha256: Sha256 = (message) => createHash('sha256').update(message).digest();
