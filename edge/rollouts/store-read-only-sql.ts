// The SQL environment's `sql` capability over the store: read-only statements on the shipped sample
// schema, with the store's own refusal codes and the driver's SQLSTATE kept in the error chain.
import type { Store } from '../../db/store.ts';
import type { ReadOnlySql } from '../environments/read-only-sql.ts';

export function storeReadOnlySql(store: Store): ReadOnlySql {
  return {
    async query(sql, options) {
      const result = await store.runReadOnlyQuery({
        sql,
        timeoutMs: options.timeoutMs,
        maxRows: options.maxRows,
        searchPath: ['sample'],
      });
      return { columns: result.columns, rows: result.rows };
    },
  };
}
