// Imports a user's environments module in Node (`edgerl edge --environments FILE`): the file's
// named `environments` export, else its default, as a record or an array (environment-record.ts).
// A TypeScript file is loaded through tsx's ESM hooks, registered here on this path only when edgerl
// itself does not run as TypeScript, so a compiled CLI still runs a user's .ts file. Node-only; the Worker gets its environments from createWorker.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errorMessage } from '../../protocol/error-message.ts';
import { type EnvironmentRecord, environmentRecord } from '../environments/environment-record.ts';
import { EnvironmentsError } from '../environments/environments-error.ts';

const typeScriptExtensions = new Set(['.ts', '.mts', '.cts', '.tsx']);
/**
 * Whether TypeScript already loads here: this module is itself .ts (run by tsx, as `bin/edgerl.js`
 * does, or by vitest), so a second tsx registration (which breaks tsx's module transform) is skipped.
 */
let typeScriptLoads = import.meta.url.endsWith('.ts');

/** `file` is resolved against `cwd` (default the process's); messages name it as given. */
export async function importEnvironments(file: string, cwd = process.cwd()): Promise<EnvironmentRecord> {
  const path = resolve(cwd, file);
  if (!existsSync(path)) {
    throw new EnvironmentsError('missing-file', `${file}: no such file (resolved to ${path})`);
  }
  if (typeScriptExtensions.has(extname(path)) && !typeScriptLoads) {
    // Global hooks rather than tsx's scoped tsImport: a scoped import would load a second copy of
    // edgerl's own modules for the user's file, and `instanceof ToolRefusal` would miss its refusals.
    const { register } = await import('tsx/esm/api');
    register();
    typeScriptLoads = true;
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    const hint =
      extname(path) === '.ts' && packageTypeOf(dirname(path)) !== 'module'
        ? ' (its package.json has no "type": "module", so tsx loads it as CommonJS: add it, or name the file .mts)'
        : missingPackageHint(error);
    throw new EnvironmentsError('import-failed', `${file}: cannot import it: ${errorMessage(error)}${hint}`, {
      cause: error,
    });
  }
  if (module.environments !== undefined)
    return environmentRecord(module.environments, `${file}: environments`);
  if (module.default !== undefined) return environmentRecord(module.default, `${file}: the default export`);
  throw new EnvironmentsError(
    'bad-export',
    `${file} exports neither \`environments\` nor a default: export a record or an array of environments made with defineEnvironment`,
  );
}

/**
 * A package the module imports that its project lacks: resolved from the module's own folder up, as Node
 * does, so the fix is an install there (the scaffold imports zod and edgerl/environment).
 */
function missingPackageHint(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const name = /Cannot find package '([^']+)'/.exec(errorMessage(error))?.[1];
  if (code !== 'ERR_MODULE_NOT_FOUND' || !name) return '';
  return ` (install it in the module's project: npm install ${name})`;
}

/** The `type` of the nearest package.json above `dir` (Node's rule for .js and tsx's for .ts). */
function packageTypeOf(dir: string): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    const manifest = join(current, 'package.json');
    if (existsSync(manifest)) {
      try {
        const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown };
        return typeof parsed.type === 'string' ? parsed.type : undefined;
      } catch {
        return undefined;
      }
    }
    if (dirname(current) === current) return undefined;
  }
}
