// Finds the first part of a JSON-like value that Postgres cannot store: nesting deeper than a fixed
// limit, or a string (value or key) with a NUL or a lone UTF-16 surrogate. Reports its path, never
// the value. Leaves out anything that is not a plain object, an array or a string.

/**
 * Deepest nesting of objects and arrays a stored value may have. Postgres parses json/jsonb input
 * recursively and fails with "stack depth limit exceeded" (SQLSTATE 54001) once `max_stack_depth`
 * (2 MB by default) runs out, a few thousand levels in (PostgreSQL manual, "Resource Consumption",
 * max_stack_depth); zod's z.json() and JSON.stringify recurse too. 64 is an edgerl choice: far beyond
 * any metadata or message shape edgerl writes, far below any of those limits.
 */
export const maxJsonDepth = 64;

export type UnstorableProblem = 'too-deep' | 'nul' | 'lone-surrogate';

export interface Unstorable {
  readonly path: readonly (string | number)[];
  readonly problem: UnstorableProblem;
}

/** Why each problem is refused, worded for an error message (no value echoed). */
export const unstorableMessages = {
  'too-deep': `nested deeper than ${maxJsonDepth} levels`,
  // Postgres text and jsonb cannot hold U+0000 (SQLSTATE 22021 / 22P05; manual, "JSON Types").
  nul: 'contains a NUL character (U+0000), which Postgres text cannot hold',
  // UTF-8 has no encoding for a lone surrogate; Postgres refuses it in jsonb and drivers replace it in text.
  'lone-surrogate': 'contains a lone UTF-16 surrogate, which is not valid Unicode',
} as const satisfies Record<UnstorableProblem, string>;

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function stringProblem(text: string): UnstorableProblem | undefined {
  if (text.includes('\u0000')) return 'nul';
  if (loneSurrogate.test(text)) return 'lone-surrogate';
  return undefined;
}

export interface FindUnstorableOptions {
  readonly maxDepth?: number;
  /** False: look for too-deep nesting only. */
  readonly text?: boolean;
}

/** The first unstorable part of `value` in depth-first order; undefined when all of it can be stored. */
export function findUnstorable(value: unknown, options: FindUnstorableOptions = {}): Unstorable | undefined {
  const maxDepth = options.maxDepth ?? maxJsonDepth;
  const text = options.text ?? true;
  const path: (string | number)[] = [];
  const visit = (node: unknown, depth: number): UnstorableProblem | undefined => {
    if (typeof node === 'string') return text ? stringProblem(node) : undefined;
    const isArray = Array.isArray(node);
    if (!isArray && !isPlainObject(node)) return undefined;
    // Recursion stops here, so the walk itself never goes deeper than maxDepth frames.
    if (depth >= maxDepth) return 'too-deep';
    if (isArray) {
      for (let index = 0; index < node.length; index++) {
        path.push(index);
        const problem = visit(node[index], depth + 1);
        if (problem) return problem;
        path.pop();
      }
      return undefined;
    }
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
      path.push(key);
      const problem = (text ? stringProblem(key) : undefined) ?? visit(child, depth + 1);
      if (problem) return problem;
      path.pop();
    }
    return undefined;
  };
  const problem = visit(value, 0);
  return problem ? { path: [...path], problem } : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** The path to name in an error: a too-deep value is named by its top-level field (`metadata`), not by
 *  the 64 keys that lead to the point where the limit was hit. */
export function unstorablePath(found: Unstorable): readonly (string | number)[] {
  return found.problem === 'too-deep' ? found.path.slice(0, 1) : found.path;
}
