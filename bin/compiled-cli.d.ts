// Types of compiled-cli.js for the TypeScript that imports it (tests, bench/cli.ts).

/** The URL of the compiled entry under `distDir`, or why it cannot run. */
export function compiledCli(distDir: string): { entry: string } | { stale: string };
