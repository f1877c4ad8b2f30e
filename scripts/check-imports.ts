// Checks the layout's import rules (docs/architecture.md): which top-level packages may import which,
// that only db/ reaches the store's query functions (others use the Store),
// that the edge's core never imports its runtime entries, that Worker-safe code reaches no Node
// built-ins or process state, and that there are no import cycles. Reads imports with a regex (enough
// for our own sources; which packages a Worker bundle reaches is test/edge/worker-bundle.test.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/** Package → packages it may import from (besides itself). */
const allowed: Record<string, readonly string[]> = {
  protocol: [],
  db: ['protocol'],
  model: ['protocol'],
  serve: ['protocol', 'model'],
  experiments: ['protocol', 'db'],
  sandbox: ['protocol'],
  console: ['protocol', 'db', 'experiments', 'trainer'],
  edge: ['protocol', 'db', 'experiments', 'sandbox', 'console'],
  trainer: ['protocol', 'db', 'model'],
  cli: ['protocol', 'db', 'model', 'serve', 'experiments', 'edge', 'trainer', 'sandbox', 'console'],
  test: ['protocol', 'db', 'model', 'serve', 'experiments', 'edge', 'trainer', 'cli', 'sandbox', 'console'],
  bench: [
    'protocol',
    'db',
    'model',
    'serve',
    'experiments',
    'edge',
    'trainer',
    'cli',
    'test',
    'sandbox',
    'console',
  ],
  // The screenshot script seeds its store with the tests' seed (test/support/seed-console.ts).
  scripts: [
    'protocol',
    'db',
    'model',
    'serve',
    'experiments',
    'edge',
    'trainer',
    'cli',
    'sandbox',
    'console',
    'test',
  ],
};

/** Unit tests beside the code may also use the shared test helpers and fixtures. */
const testHelpers = 'test';

/**
 * The store's query functions: outside db/ they are reached only through the Store object (db/store.ts),
 * which maps driver errors in one place and runs them inside `store.transaction`. Tests and benches may
 * reach in.
 */
const storeInternals = 'db/store';
const mayReachStoreInternals = ['db', 'test', 'bench'];

/** The engines (tfjs, torch) sit below the training cycle: the cycle drives them, never the reverse. */
const trainerEngines = 'trainer/engine';

/** The edge's runtime entries (Workers, Node, the dev tunnel): they import the core, never the reverse. */
const edgeRuntime = 'edge/runtime';

/**
 * Folders that run in a Worker as well as in Node: no Node built-ins (static or dynamic import) and no
 * `process` (configuration arrives as arguments; see the conventions on one config per process).
 */
const workerSafe = ['protocol', 'experiments', 'trainer/ruler', 'trainer/grpo', 'sandbox', 'console'];

/**
 * The console runs in the edge's Worker, so of the trainer it may reach only the Worker-safe, pure
 * parts (the advantage formula, which trajectories count), never the training loop or the model.
 */
const consoleTrainerParts = ['trainer/grpo', 'trainer/ruler'];
/** Node-only corners of Worker-safe folders: the embedded sandbox's worker threads, pg, provisioning. */
const nodeCorners = ['sandbox/node'];
const nodeOnly =
  /(?:from|import)\s*\(?\s*['"](?:node:[^'"]+|fs|path|http|https|net|os|crypto|child_process|worker_threads)['"]|\bprocess\.|\brequire\(/;

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

const rel = (file: string) => relative(root, file).replaceAll('\\', '/');
const packageOf = (file: string) => rel(file).split('/')[0] ?? '';
const isTest = (file: string) => file.endsWith('.test.ts');
const within = (file: string, folder: string) => rel(file).startsWith(`${folder}/`);

function checkImport(file: string, target: string): string | undefined {
  const from = packageOf(file);
  const to = packageOf(target);
  if (!(to in allowed)) return undefined;
  if (within(target, storeInternals) && !mayReachStoreInternals.includes(from) && !isTest(file)) {
    return `${rel(file)} imports ${rel(target)}: outside db/, use the Store (db/store.ts), not db/store/*.ts`;
  }
  if (from === to) {
    if (from === 'edge' && within(target, edgeRuntime) && !within(file, edgeRuntime) && !isTest(file)) {
      return `${rel(file)} imports ${rel(target)}: the edge's core may not import ${edgeRuntime}/`;
    }
    if (within(file, trainerEngines) && within(target, 'trainer/train') && !isTest(file)) {
      return `${rel(file)} imports ${rel(target)}: ${trainerEngines}/ sits below the cycle and may not import trainer/train/`;
    }
    return undefined;
  }
  // The SQL sandbox is injected into the edge by its runtime entries; the core sees only the contract.
  if (from === 'edge' && to === 'sandbox' && !within(file, edgeRuntime) && !isTest(file)) {
    return `${rel(file)} imports ${rel(target)}: only ${edgeRuntime}/ may import sandbox/ (the core gets it as a capability)`;
  }
  if (from === 'console' && to === 'trainer' && !consoleTrainerParts.some((part) => within(target, part))) {
    return `${rel(file)} imports ${rel(target)}: console/ may reach only ${consoleTrainerParts.join(' and ')} of the trainer`;
  }
  if ((allowed[from] ?? []).includes(to)) return undefined;
  if (isTest(file) && to === testHelpers) return undefined;
  return `${rel(file)} imports ${rel(target)}: ${from}/ may not import ${to}/`;
}

const files = Object.keys(allowed).flatMap((dir) => listSources(join(root, dir)));
const graph = new Map<string, string[]>();
const problems: string[] = [];

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const workerSafeFile =
    workerSafe.some((folder) => within(file, folder)) && !nodeCorners.some((folder) => within(file, folder));
  if (!isTest(file) && workerSafeFile && nodeOnly.test(text)) {
    problems.push(`${rel(file)} runs in Workers too: no Node built-ins, require() or process`);
  }
  const targets: string[] = [];
  for (const match of text.matchAll(importPattern)) {
    const spec = match[1] ?? match[2];
    if (!spec) continue;
    const target = resolve(dirname(file), spec);
    targets.push(target);
    const problem = checkImport(file, target);
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
      const cycle = [...stack.slice(stack.indexOf(target)), target].map(rel);
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
console.log(`imports: ${files.length} files, directions, Worker safety and cycles OK`);
