// Where a store lives, read from its URL: no URL → the embedded PGlite directory, `memory://` → a
// throwaway in-memory PGlite, `postgres://` / `postgresql://` → a server. Pure: no I/O, no env.

import { redactSecrets } from '../../protocol/redact-secrets.ts';

export type StoreLocation =
  | { readonly kind: 'embedded'; readonly dataDir: string }
  | { readonly kind: 'memory' }
  | { readonly kind: 'server'; readonly url: string };

export const memoryUrl = 'memory://';

/** The embedded store's directory under the working directory when none is given. */
export const defaultDataDir = '.edgerl/pgdata';

export function storeLocation(url: string | undefined, dataDir: string): StoreLocation {
  if (url === undefined || url.trim() === '') return { kind: 'embedded', dataDir };
  if (url === memoryUrl) return { kind: 'memory' };
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new Error(`database URL ${redactUrl(url)} is not a valid URL`);
    }
    return { kind: 'server', url };
  }
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? url;
  throw new Error(
    `unsupported database URL scheme "${scheme}": use postgres://…, postgresql://…, ${memoryUrl}, or no URL for the embedded store`,
  );
}

/** The URL with its password (and any secret parameter) replaced, safe for messages and logs. */
export function redactUrl(url: string): string {
  return redactSecrets(url);
}
