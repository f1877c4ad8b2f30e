// Whether the compiled CLI in dist/ (scripts/build-cli.ts) may run: its stamp names the entry and the
// mtime of every source file the build read, and one that changed, moved or is gone means the build is
// stale. Plain JavaScript, because it runs before anything could compile TypeScript. Leaves out
// rebuilding: a stale build falls back to the sources, and `npm run build:cli` makes a new one.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The URL of the compiled entry under `distDir`, or why it cannot run (no build, or the first source
 * that changed since). Costs one JSON read and a stat per source (about 600) and of the entry.
 * @param {string} distDir
 * @returns {{ entry: string } | { stale: string }}
 */
export function compiledCli(distDir) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(distDir, 'stamp.json'), 'utf8'));
  } catch {
    return { stale: `no build in ${distDir} (npm run build:cli)` };
  }
  for (const [file, mtimeMs] of Object.entries(stamp.sources)) {
    const current = statSync(join(distDir, file), { throwIfNoEntry: false });
    if (current?.mtimeMs !== mtimeMs) return { stale: `${file} changed since the build` };
  }
  // A build another one removed (two builds at once): its stamp may outlive its folder.
  const entry = join(distDir, stamp.entry);
  if (!statSync(entry, { throwIfNoEntry: false })) return { stale: `${stamp.entry} is gone` };
  return { entry: pathToFileURL(entry).href };
}
