// The observation for a query result: a compact pipe table, header first, then the row count.
// Text rather than JSON because every character is a token the model reads and the trainer pays for.
import type { SqlRows } from '../../../protocol/read-only-sql.ts';
import { dateText } from './sql-value.ts';

/** Longer cells are cut: a query result is evidence, not a document. */
const maxCellChars = 120;

export function formatSqlResult(result: SqlRows, shownRows: number): string {
  const rows = result.rows.slice(0, shownRows);
  const lines = [result.columns.join(' | '), ...rows.map((row) => row.map(cellText).join(' | '))];
  const more = result.rows.length > shownRows;
  const count = rows.length === 1 ? '1 row' : `${rows.length} rows`;
  lines.push(more ? `(first ${count} shown; there are more)` : `(${count})`);
  return lines.join('\n');
}

function cellText(value: unknown): string {
  const text =
    value === null || value === undefined
      ? 'NULL'
      : value instanceof Date
        ? dateText(value)
        : typeof value === 'object'
          ? JSON.stringify(value)
          : String(value);
  const flat = text.replaceAll('\n', '\\n');
  return flat.length > maxCellChars ? `${flat.slice(0, maxCellChars)}…` : flat;
}
