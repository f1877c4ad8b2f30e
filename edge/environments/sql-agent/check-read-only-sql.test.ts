import { describe, expect, it } from 'vitest';
import { checkReadOnlySql, maxQueryChars } from './check-read-only-sql.ts';

function reason(sql: string): string | undefined {
  const check = checkReadOnlySql(sql);
  return check.ok ? undefined : check.reason;
}

describe('checkReadOnlySql', () => {
  it('accepts single SELECT and WITH queries, with literals and comments that merely mention writes', () => {
    const accepted = [
      'SELECT name FROM customers',
      'select count(*) from orders;',
      '  WITH t AS (SELECT 1 AS x) SELECT x FROM t ;  ',
      "SELECT 'DROP TABLE x; DELETE' AS s",
      "SELECT 'it''s; fine'",
      "SELECT E'a\\'; drop' AS s",
      'SELECT $$ ; insert $$ AS s, $tag$ ; $tag$',
      'SELECT 1 -- ; drop table customers\n',
      'SELECT 1; -- a comment after the end\n /* and another */ ;',
      'SELECT /* nested /* ; update */ still comment */ 1',
      'SELECT "update" FROM (SELECT 1 AS "update") AS t',
      'SELECT t.update FROM t',
      'SELECT c.name FROM customers c WHERE c.signed_up_on >= $1',
      '(SELECT 1) UNION (SELECT 2)',
    ];
    for (const sql of accepted) expect(reason(sql), sql).toBeUndefined();
  });

  it('refuses writes, naming the statement', () => {
    expect(reason("INSERT INTO customers VALUES (99, 'x')")).toBe(
      'only SELECT or WITH queries are allowed, this one starts with INSERT',
    );
    expect(reason('UPDATE products SET price = 1')).toBe(
      'only SELECT or WITH queries are allowed, this one starts with UPDATE',
    );
    expect(reason('drop table orders')).toBe(
      'only SELECT or WITH queries are allowed, this one starts with DROP',
    );
    expect(reason('WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d')).toBe(
      'the database is read-only; DELETE is not allowed',
    );
    expect(reason('SELECT * INTO copy FROM customers')).toBe(
      'the database is read-only; INTO is not allowed',
    );
    expect(reason('SELECT * FROM orders FOR UPDATE')).toBe(
      'the database is read-only; UPDATE is not allowed',
    );
    expect(reason('EXPLAIN ANALYZE DELETE FROM orders')).toBe(
      'only SELECT or WITH queries are allowed, this one starts with EXPLAIN',
    );
    expect(reason('-- just a comment')).toBe(
      'only SELECT or WITH queries are allowed, this one starts with no keyword',
    );
  });

  it('refuses more than one statement, and side-effecting functions', () => {
    expect(reason('SELECT 1; DROP TABLE orders')).toBe('only one statement per query is allowed, found 2');
    expect(reason('SELECT 1; SELECT 2;')).toBe('only one statement per query is allowed, found 2');
    expect(reason('SELECT 1;\n-- and\nSELECT 2; SELECT 3')).toBe(
      'only one statement per query is allowed, found 3',
    );
    expect(reason('SELECT pg_sleep(30)')).toBe('the function pg_sleep() is not allowed');
    expect(reason("SELECT set_config('statement_timeout', '0', false)")).toBe(
      'the function set_config() is not allowed',
    );
  });

  it('refuses empty, oversized and unterminated text', () => {
    expect(reason('  ')).toBe('the query is empty');
    expect(reason(`SELECT '${'x'.repeat(maxQueryChars)}'`)).toMatch(/characters long; the limit is 4000$/);
    expect(reason("SELECT 'open")).toBe('unterminated string literal');
    expect(reason('SELECT 1 /* open')).toBe('unterminated /* comment');
    expect(reason('SELECT $a$ open')).toBe('unterminated dollar-quoted string $a$');
  });
});

describe('checkReadOnlySql and the server beyond the shop', () => {
  it('refuses transaction-id and snapshot functions by name', () => {
    expect(reason('select txid_current()')).toBe('the function txid_current() is not allowed');
    expect(reason('SELECT pg_current_xact_id()')).toBe('the function pg_current_xact_id() is not allowed');
    expect(reason('select pg_export_snapshot()')).toBe('the function pg_export_snapshot() is not allowed');
  });

  it('refuses the catalogs of databases, roles and sessions, qualified or not', () => {
    for (const [sql, catalog] of [
      ['select datname from pg_database', 'pg_database'],
      ['select rolname from pg_catalog.pg_roles', 'pg_roles'],
      ['SELECT usename FROM PG_USER', 'pg_user'],
      ['select * from pg_locks', 'pg_locks'],
      ['select query from pg_catalog.pg_stat_activity', 'pg_stat_activity'],
    ]) {
      expect(reason(sql as string), sql).toBe(
        `${catalog} describes the server, not the shop; only the shop tables can be read`,
      );
    }
  });
});
