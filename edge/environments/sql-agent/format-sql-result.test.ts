import { describe, expect, it } from 'vitest';
import { formatSqlResult } from './format-sql-result.ts';

describe('formatSqlResult', () => {
  it('prints a pipe table with a row count, and says when rows were held back', () => {
    const result = {
      columns: ['name', 'first', 'note'],
      rows: [
        ['Ada', new Date('2024-01-12T00:00:00.000Z'), null],
        ['Ben', new Date('2024-01-18T00:00:00.000Z'), 'two\nlines'],
      ],
    };
    expect(formatSqlResult(result, 5)).toBe(
      'name | first | note\nAda | 2024-01-12 | NULL\nBen | 2024-01-18 | two\\nlines\n(2 rows)',
    );
    expect(formatSqlResult(result, 1)).toBe(
      'name | first | note\nAda | 2024-01-12 | NULL\n(first 1 row shown; there are more)',
    );
    expect(formatSqlResult({ columns: ['count'], rows: [] }, 5)).toBe('count\n(0 rows)');
  });
});
