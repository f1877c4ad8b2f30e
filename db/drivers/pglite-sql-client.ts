// SqlClient over embedded PGlite (Node only). PGlite is one backend: a transaction holds it exclusively
// and other queries wait, so `transaction` here serialises with everything else.
import type { PGlite, Transaction } from '@electric-sql/pglite';
import type { SqlClient, SqlResult } from '../sql-client.ts';
import { sqlValueParsers } from '../../protocol/sql-value-parsers.ts';

type Queryable = Pick<PGlite, 'query'> | Pick<Transaction, 'query'>;

async function run(target: Queryable, text: string, params?: readonly unknown[]): Promise<SqlResult> {
  const result = await target.query<unknown[]>(text, params ? [...params] : undefined, {
    rowMode: 'array',
    parsers: sqlValueParsers,
  });
  return {
    columns: result.fields.map((field) => field.name),
    rows: result.rows,
    affectedRows: result.affectedRows,
  };
}

export function pgliteSqlClient(pglite: PGlite): SqlClient {
  return {
    query: (text, params) => run(pglite, text, params),
    transaction: (work, options = {}) =>
      pglite.transaction(async (tx) => {
        // PGlite opens the transaction itself; READ ONLY must come before any query in it.
        if (options.readOnly) await tx.query('set transaction read only');
        return work({ query: (text, params) => run(tx, text, params) });
      }),
  };
}
