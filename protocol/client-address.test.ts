// The limiter's client address: the peer unless proxies are trusted, then X-Forwarded-For counted
// from the right, so a client cannot pick its own address by writing the header.
import { describe, expect, it } from 'vitest';
import { clientAddress, nodePeerAddress } from './client-address.ts';

describe('clientAddress', () => {
  it('ignores X-Forwarded-For unless proxies are trusted', () => {
    expect(clientAddress({ remote: '203.0.113.9', forwardedFor: '1.2.3.4', trustedProxies: 0 })).toBe(
      '203.0.113.9',
    );
    expect(clientAddress({ remote: undefined, forwardedFor: undefined, trustedProxies: 0 })).toBe('unknown');
  });

  it('takes the entry as many hops from the right as there are trusted proxies', () => {
    // The client wrote "6.6.6.6"; the one trusted proxy appended the client's real address, 198.51.100.2.
    const sources = { remote: '10.0.0.1', forwardedFor: '6.6.6.6, 198.51.100.2' };
    expect(clientAddress({ ...sources, trustedProxies: 1 })).toBe('198.51.100.2');
    expect(clientAddress({ ...sources, trustedProxies: 2 })).toBe('6.6.6.6');
    // More proxies trusted than entries: the leftmost.
    expect(clientAddress({ ...sources, trustedProxies: 5 })).toBe('6.6.6.6');
    expect(clientAddress({ remote: '10.0.0.1', forwardedFor: undefined, trustedProxies: 1 })).toBe(
      '10.0.0.1',
    );
  });

  it("reads @hono/node-server's socket peer", () => {
    expect(nodePeerAddress({ incoming: { socket: { remoteAddress: '::1' } } })).toBe('::1');
    expect(nodePeerAddress(undefined)).toBeUndefined();
    expect(nodePeerAddress({})).toBeUndefined();
  });
});
