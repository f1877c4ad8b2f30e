// Writes the console's static export (console/export/export-console.ts) into a folder: fresh each
// time (the folder is replaced, so no page of an older export is left behind), via a temporary
// sibling renamed into place.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Store } from '../../db/store.ts';
import { type ExportResult, exportConsole } from '../../console/export/export-console.ts';

export async function writeConsoleExport(
  store: Store,
  dir: string,
  options: { readonly tokenText?: (ids: readonly number[]) => readonly string[] } = {},
): Promise<ExportResult & { readonly dir: string; readonly index: string }> {
  const target = resolve(dir);
  const temporary = `${target}.tmp-${process.pid}`;
  await rm(temporary, { recursive: true, force: true });
  const result = await exportConsole(store, {
    ...options,
    write: async (name, body) => {
      const path = join(temporary, name);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, body);
    },
  });
  await rm(target, { recursive: true, force: true });
  await mkdir(dirname(target), { recursive: true });
  await rename(temporary, target);
  return { ...result, dir: target, index: join(target, 'index.html') };
}
