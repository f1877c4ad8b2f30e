// The console's default port, apart from start-console.ts (Hono's Node server, the console's routes
// and the store's queries) so that `edgerl console --help` shows it without loading them.

/** The edge's 8787, plus one: both can run on one machine with their defaults. */
export const defaultConsolePort = 8788;
