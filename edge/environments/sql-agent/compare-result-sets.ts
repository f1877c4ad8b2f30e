// Execution-match comparison of two query results, as text-to-SQL benchmarks score them (Spider's
// execution accuracy, Yu et al. 2018): the same values in the same columns; row order matters only
// when the question asks for an order. Column names are ignored (aliases are free).
import { canonicalSqlValue } from './sql-value.ts';

export type ResultComparison = { readonly equal: true } | { readonly equal: false; readonly reason: string };

export function compareResultSets(
  expected: readonly (readonly unknown[])[],
  actual: readonly (readonly unknown[])[],
  options: { readonly ordered: boolean },
): ResultComparison {
  const width = (rows: readonly (readonly unknown[])[]) => rows[0]?.length ?? 0;
  if (expected.length > 0 && actual.length > 0 && width(expected) !== width(actual)) {
    return { equal: false, reason: `expected ${width(expected)} columns, got ${width(actual)}` };
  }
  if (expected.length !== actual.length) {
    return { equal: false, reason: `expected ${expected.length} rows, got ${actual.length}` };
  }
  const key = (row: readonly unknown[]) => JSON.stringify(row.map(canonicalSqlValue));
  const expectedKeys = expected.map(key);
  const actualKeys = actual.map(key);
  if (!options.ordered) {
    expectedKeys.sort();
    actualKeys.sort();
  }
  const at = expectedKeys.findIndex((rowKey, i) => rowKey !== actualKeys[i]);
  if (at === -1) return { equal: true };
  return options.ordered
    ? { equal: false, reason: `row ${at + 1} differs: expected ${expectedKeys[at]}, got ${actualKeys[at]}` }
    : { equal: false, reason: `the rows differ: expected ${expectedKeys[at]} among them` };
}
