// Which address a request came from, for the guess limiter: the connection's own peer (Node's socket,
// a Worker's cf-connecting-ip, which Cloudflare sets and overwrites), unless the operator says the
// server sits behind `trustedProxies` proxies, and only then the X-Forwarded-For entry that many hops
// from the right (what Express's `trust proxy = N` reads; MDN's X-Forwarded-For "Security and privacy
// concerns"): entries further left are whatever the client wrote and would let it pick a fresh
// address per guess. Leaves out reading the socket (runtime code does) and rate limiting itself.

export interface AddressSources {
  /** The peer of the connection, when the runtime knows it. */
  readonly remote: string | undefined;
  /** The X-Forwarded-For header as received, if any. */
  readonly forwardedFor: string | undefined;
  /** Proxies in front of this server that append to X-Forwarded-For (0: trust no header). */
  readonly trustedProxies: number;
}

export function clientAddress(sources: AddressSources): string {
  const remote = sources.remote?.trim() || 'unknown';
  if (sources.trustedProxies <= 0) return remote;
  const forwarded = (sources.forwardedFor ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  // The chain as the last trusted proxy saw it: the client's own claims first, each proxy's peer after.
  const chain = [...forwarded, remote];
  return chain[Math.max(0, chain.length - 1 - sources.trustedProxies)] ?? remote;
}

/**
 * The peer address of a request served by @hono/node-server, which passes Node's IncomingMessage as
 * `env.incoming` (what its conninfo helper reads); undefined elsewhere (a Worker, Hono's app.request).
 */
export function nodePeerAddress(env: unknown): string | undefined {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: unknown } } } | undefined)?.incoming;
  const address = incoming?.socket?.remoteAddress;
  return typeof address === 'string' ? address : undefined;
}
