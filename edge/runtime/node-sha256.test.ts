// The two SHA-256s the history digest can run on give the same digests: node:crypto's (the Node
// entry's) and protocol/sha256.ts's JavaScript (the Worker's), on messages across the padding
// boundaries and large ones, and through the digest chain, each checked against the chain's
// definition computed here with node:crypto directly (the independent reference).
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { historyDigests, historyEntry } from '../../protocol/history-digest.ts';
import { javascriptSha256 as sha256, useSha256 } from '../../protocol/sha256.ts';
import { nodeSha256 } from './node-sha256.ts';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

afterEach(() => {
  useSha256(sha256);
});

describe('nodeSha256', () => {
  it("gives the JavaScript implementation's bytes for every length across the padding boundaries and large messages", () => {
    const lengths = [...Array.from({ length: 140 }, (_, length) => length), 1000, 65_536, 1_000_003];
    for (const length of lengths) {
      const bytes = Uint8Array.from({ length }, (_, index) => (index * 131 + length) & 0xff);
      expect(hex(nodeSha256(bytes)), `length ${length}`).toBe(hex(sha256(bytes)));
    }
  });

  it('gives the same history digests as the JavaScript one, as the chain defines them', () => {
    const entries = ['system', 'user', 'assistant', 'tool'].map((role, index) =>
      historyEntry({ role, content: `${'é🦀'.repeat(index * 40)} turn ${index}`, toolCallId: 'c1' }),
    );
    // digest(n) = hex(SHA-256(bytes(digest(n-1)) ‖ UTF-8(entry n))), from no bytes (history-digest.ts).
    const reference: string[] = [];
    let previous = Buffer.alloc(0);
    for (const entry of entries) {
      previous = createHash('sha256').update(previous).update(entry, 'utf8').digest();
      reference.push(previous.toString('hex'));
    }
    useSha256(sha256);
    expect(historyDigests(entries)).toEqual(reference);
    useSha256(nodeSha256);
    expect(historyDigests(entries)).toEqual(reference);
    expect(historyDigests(entries.slice(2), reference[1])).toEqual(reference.slice(2));
  });
});
