// Checks the import rules of the README: which top-level folders may import which, and no cycles.
// Reads relative imports with a regex (enough for our own sources; package imports are not checked).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/** Folder → folders it may import from (besides itself). Longest matching prefix wins. */
const allowed: Record<string, readonly string[]> = {
  protocol: [],
  db: ['protocol'],
  'trainer/model': ['protocol'],
  trainer: ['protocol', 'db'],
  edge: ['protocol', 'db'],
  cli: ['protocol', 'db', 'edge', 'trainer'],
  test: ['protocol', 'db', 'edge', 'trainer', 'cli'],
  bench: ['protocol', 'db', 'edge', 'trainer', 'cli', 'test'],
  scripts: ['protocol', 'db', 'edge', 'trainer', 'cli'],
};

const sourceDirs = Object.keys(allowed).filter((dir) => !dir.includes('/'));
const importPattern =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function listSources(dir: string): string[] {
  const out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...listSources(path));
    else if (/\.(ts|tsx|mts)$/.test(entry) && !entry.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function zoneOf(file: string): string | undefined {
  const rel = relative(root, file).replaceAll('\\', '/');
  return Object.keys(allowed)
    .filter((zone) => rel === zone || rel.startsWith(`${zone}/`))
    .sort((a, b) => b.length - a.length)[0];
}

function topOf(zone: string): string {
  return zone.split('/')[0] ?? zone;
}

function checkEdge(file: string, target: string): string | undefined {
  const from = zoneOf(file);
  const to = zoneOf(target);
  if (!from || !to || from === to) return undefined;
  const ok =
    topOf(from) === topOf(to)
      ? !(from === 'trainer/model' && to === 'trainer') // the model runtime stands alone
      : (allowed[from] ?? []).some((zone) => zone === to || zone === topOf(to));
  return ok
    ? undefined
    : `${relative(root, file)} imports ${relative(root, target)}: ${from}/ may not import ${to}/`;
}

const files = sourceDirs.flatMap((dir) => listSources(join(root, dir)));
const graph = new Map<string, string[]>();
const problems: string[] = [];

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const targets: string[] = [];
  for (const match of text.matchAll(importPattern)) {
    const spec = match[1] ?? match[2];
    if (!spec) continue;
    const target = resolve(dirname(file), spec);
    targets.push(target);
    const problem = checkEdge(file, target);
    if (problem) problems.push(problem);
  }
  graph.set(file, targets);
}

// Cycle check: depth-first search over the relative-import graph.
const state = new Map<string, 'visiting' | 'done'>();
function visit(file: string, stack: string[]): void {
  state.set(file, 'visiting');
  for (const target of graph.get(file) ?? []) {
    if (!graph.has(target)) continue;
    const seen = state.get(target);
    if (seen === 'visiting') {
      const cycle = [...stack.slice(stack.indexOf(target)), target].map((f) => relative(root, f));
      problems.push(`import cycle: ${cycle.join(' -> ')}`);
    } else if (seen === undefined) {
      visit(target, [...stack, target]);
    }
  }
  state.set(file, 'done');
}
for (const file of graph.keys()) if (!state.has(file)) visit(file, [file]);

if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log(`imports: ${files.length} files, directions and cycles OK`);
