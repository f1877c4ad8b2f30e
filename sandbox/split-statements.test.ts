import { describe, expect, it } from 'vitest';
import { splitStatements } from './split-statements.ts';

describe('splitStatements', () => {
  it('splits at top-level semicolons only', () => {
    const sql = `select 'a;b', "x;y" from t; -- c;d
      /* e; /* nested; */ f; */ insert into t values ($$g;h$$, $tag$ i; $$ j; $tag$, E'k\\';l');
      with q as (select 1) select * from q;;  `;
    expect(splitStatements(sql).map((statement) => statement.keyword)).toEqual(['select', 'insert', 'with']);
    expect(splitStatements(sql)[0]?.text).toBe(`select 'a;b', "x;y" from t`);
  });

  it('reads the keyword after comments and parentheses', () => {
    expect(splitStatements('/* why */ -- note\n ((SELECT 1))')).toEqual([
      { text: '/* why */ -- note\n ((SELECT 1))', keyword: 'select' },
    ]);
  });

  it('finds nothing in blank or comment-only text', () => {
    expect(splitStatements('  ;\n -- nothing here; really\n /* ; */ ;')).toEqual([]);
  });

  it("does not treat a type's trailing e as an E'' string, nor $1 as a dollar quote", () => {
    // In date'…' the backslash is literal, so the string ends at the next quote and the ; splits.
    expect(
      splitStatements("select date'2024-01-01\\'; select $1").map((statement) => statement.keyword),
    ).toEqual(['select', 'select']);
  });

  it('keeps an unterminated quote as one statement', () => {
    expect(splitStatements("select 'open; delete from t")).toHaveLength(1);
  });
});
