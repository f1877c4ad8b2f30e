// Whether a state-changing request comes from the console's own pages: the browser's Fetch Metadata
// (`Sec-Fetch-Site`, https://www.w3.org/TR/fetch-metadata/) when it sends it, else the `Origin` header
// against the request's own origin. Neither header (a non-browser client) passes here; the CSRF token
// still has to match, which a cross-site page cannot read.
export function sameOrigin(request: Request): boolean {
  const site = request.headers.get('sec-fetch-site');
  if (site !== null) return site === 'same-origin';
  const origin = request.headers.get('origin');
  if (origin !== null) return origin === new URL(request.url).origin;
  return true;
}

/**
 * Host names a console without a key answers to (the request URL's host, which Node builds from the
 * Host header): loopback only, so a page on a DNS-rebound name cannot reach it.
 */
export function isLoopbackHost(hostAndPort: string): boolean {
  const host = hostAndPort.replace(/:\d+$/, '').toLowerCase();
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
}
