// Compiles the `edgerl` CLI to JavaScript (`npm run build:cli`; `npm ci` runs it as `prepare`): esbuild
// bundles cli/main.ts with code splitting, so the command table loads alone and each command's chunk
// loads when that command runs. npm packages stay external (node_modules, native and wasm files as they
// are); only our sources are bundled. bin/edgerl.js runs the build while dist/stamp.json says it is
// current (bin/compiled-cli.js), and the sources through tsx otherwise. Leaves out type-checking (tsc).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { BuildOptions, Plugin } from 'esbuild';

const root = resolve(import.meta.dirname, '..');

/** What the build reads besides the bundle's inputs: changing one of them changes the output. */
const buildFiles = ['scripts/build-cli.ts', 'tsconfig.json'];

/** dist/stamp.json, which bin/compiled-cli.js reads: the build's entry and every file it was made from. */
export interface CliStamp {
  /** The entry module, relative to the stamp's folder, e.g. `build-1a2b3c/edgerl.js`. */
  readonly entry: string;
  /** Source file (relative to the stamp's folder) → its mtime in ms when the build read it. */
  readonly sources: Readonly<Record<string, number>>;
}

export interface BuiltCli {
  readonly stampFile: string;
  readonly entry: string;
  readonly sources: number;
}

/**
 * Bundles the CLI into `outDir/build-<id>/`, then writes `outDir/stamp.json`, then removes the builds
 * before the previous one: a CLI started from the previous build can still load its chunks.
 */
export async function buildCli(outDir = join(root, 'dist')): Promise<BuiltCli> {
  const { build } = await import('esbuild');
  const buildName = `build-${randomBytes(4).toString('hex')}`;
  const buildDir = join(outDir, buildName);
  // Read before bundling: a file saved during the build gets a later mtime, so the stamp calls it stale.
  const startedMs = Date.now();
  const options = {
    absWorkingDir: root,
    entryPoints: { edgerl: 'cli/main.ts' },
    outdir: buildDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    // package.json "engines"; esbuild's target names: https://esbuild.github.io/api/#target
    target: 'node22.12',
    packages: 'external',
    // Every output in one folder, so sourceLocation's relative paths hold for each chunk.
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    // Read only when EDGERL_DEBUG asks for stacks (bin/edgerl.js turns source maps on then).
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [sourceLocation(buildDir)],
  } satisfies BuildOptions;
  const result = await build(options);
  const inputs = Object.keys(result.metafile.inputs).filter((file) => !file.includes('node_modules/'));
  const sources: Record<string, number> = {};
  for (const file of [...inputs, ...buildFiles]) {
    const path = join(root, file);
    sources[relative(outDir, path)] = Math.min(statSync(path).mtimeMs, startedMs);
  }
  const stamp: CliStamp = { entry: `${buildName}/edgerl.js`, sources };
  const stampFile = join(outDir, 'stamp.json');
  const previous = readPreviousEntry(stampFile);
  // Written whole, then renamed: bin never reads half a stamp.
  const partial = `${stampFile}.${buildName}`;
  writeFileSync(partial, `${JSON.stringify(stamp, null, 1)}\n`);
  renameSync(partial, stampFile);
  for (const entry of readdirSync(outDir)) {
    if (entry.startsWith('build-') && entry !== buildName && entry !== previous) {
      rmSync(join(outDir, entry), { recursive: true, force: true });
    }
  }
  return { stampFile, entry: join(outDir, stamp.entry), sources: inputs.length };
}

/**
 * Our modules find files next to them through `import.meta.url` (worker entries such as
 * model/worker-thread/boot-worker.js, the repository root, package.json). In a chunk that URL would
 * name the chunk, so each module's `import.meta.url` is rewritten to its source file's URL, found
 * relative to the chunk: the files stay where they are, and a moved checkout still works.
 */
function sourceLocation(buildDir: string): Plugin {
  return {
    name: 'edgerl:source-location',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes('/node_modules/')) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (/import\.meta\.(dirname|filename)/.test(text)) {
          return {
            errors: [
              { text: `${relative(root, args.path)}: use import.meta.url (the CLI build rewrites it)` },
            ],
          };
        }
        if (!text.includes('import.meta.url')) return undefined;
        const fromChunk = relative(buildDir, args.path).split('\\').join('/');
        const sourceUrl = `new URL(${JSON.stringify(fromChunk)}, import.meta.url).href`;
        return { contents: text.replaceAll('import.meta.url', sourceUrl), loader: 'ts' };
      });
    },
  };
}

function readPreviousEntry(stampFile: string): string | undefined {
  try {
    const stamp = JSON.parse(readFileSync(stampFile, 'utf8')) as Partial<CliStamp>;
    return typeof stamp.entry === 'string' ? dirname(stamp.entry) : undefined;
  } catch {
    return undefined;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === import.meta.filename) {
  // --out-dir: another folder than dist/ (tests build into a temporary one; bin reads dist/ only).
  const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
  // `npm ci --omit=dev` runs `prepare` too, without esbuild: the CLI then runs through tsx.
  const hasEsbuild = await import('esbuild').then(
    () => true,
    () => false,
  );
  if (!hasEsbuild) {
    console.log(
      'build-cli: esbuild is not installed (a production install); edgerl runs its sources via tsx',
    );
  } else {
    const outDir = resolve(values['out-dir'] ?? join(root, 'dist'));
    mkdirSync(outDir, { recursive: true });
    const built = await buildCli(outDir);
    console.log(`build-cli: ${relative(root, built.entry)} from ${built.sources} sources`);
  }
}
