import { describe, expect, it } from 'vitest';
import { extractFinalSql } from './extract-final-sql.ts';

describe('extractFinalSql', () => {
  it('takes the last sql block, else the last block, else a bare query', () => {
    expect(extractFinalSql('Try:\n```sql\nSELECT 1\n```\nbetter:\n```sql\nSELECT 2;\n```')).toBe('SELECT 2;');
    expect(extractFinalSql('```\nselect name from customers\n```')).toBe('select name from customers');
    expect(extractFinalSql('  WITH t AS (SELECT 1) SELECT * FROM t ')).toBe(
      'WITH t AS (SELECT 1) SELECT * FROM t',
    );
    expect(extractFinalSql('The answer is 6.')).toBeUndefined();
  });
});
