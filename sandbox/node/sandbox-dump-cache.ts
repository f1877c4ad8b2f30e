// The embedded SQL sandbox's built database on disk, so an edge builds it once (4–12 s: seed, role,
// grants, revokes, dump) and later starts load it (well under a second). Keyed by a hash of everything
// the build runs and of PGlite's version, so a changed seed, privilege or PGlite rebuilds it (and the
// old file goes); a file that will not load is rebuilt by the caller. Leaves out building (embedded-read-only-sql.ts).
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';

/** Bumped when the dump's build changes in a way its inputs do not show. */
const dumpFormat = 1;

/** PGlite's version: a dump is its data directory, which another version may not read. */
function pgliteVersion(): string {
  try {
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    const manifest = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
      version?: string;
    };
    return manifest.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The cache key of a build: a SHA-256 of its inputs (the seed, the statements it runs), PGlite's version and the format. */
export function sandboxDumpKey(inputs: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of [`format ${dumpFormat}`, `pglite ${pgliteVersion()}`, ...inputs]) {
    hash.update(`${part.length}:${part}`);
  }
  return hash.digest('hex').slice(0, 32);
}

export interface SandboxDumpCache {
  /** Where the dump of `key` lives (it may not exist yet). */
  path(key: string): string;
  /** The dump stored under `key`, or undefined when there is none. */
  read(key: string): Promise<ArrayBuffer | undefined>;
  /**
   * Stores a dump under `key`: written beside it, then renamed, so a reader never sees half a file;
   * the dumps of other keys (an older seed or privilege list, tens of MB each) are removed.
   */
  write(key: string, bytes: ArrayBuffer): Promise<void>;
  /** Drops the dump under `key` (it did not load). */
  remove(key: string): Promise<void>;
}

export function sandboxDumpCache(dir: string): SandboxDumpCache {
  const path = (key: string) => join(dir, `embedded-sandbox-${key}.tar`);
  return {
    path,
    async read(key) {
      try {
        const bytes = await readFile(path(key));
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async write(key, bytes) {
      await mkdir(dir, { recursive: true });
      const partial = `${path(key)}.${randomBytes(6).toString('hex')}.partial`;
      await writeFile(partial, new Uint8Array(bytes));
      await rename(partial, path(key));
      const kept = basename(path(key));
      for (const name of await readdir(dir)) {
        if (name !== kept && /^embedded-sandbox-[0-9a-f]+\.tar$/.test(name))
          await rm(join(dir, name), { force: true });
      }
    },
    async remove(key) {
      await rm(path(key), { force: true });
    },
  };
}
