// `edgerl sql "<query>"`: runs one statement against the configured store and prints an aligned table
// (psql's layout: NULL blank, numbers right-aligned), or JSON / CSV. Postgres errors become one line
// with their SQLSTATE.
import { withSqlState } from '../../db/database-errors.ts';
import type { SqlResult } from '../../db/sql-client.ts';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { defineCommand, stringFlag, UsageError } from '../command.ts';

export const sqlCommand = defineCommand({
  usage: `Usage: edgerl sql "<query>" [--json | --csv] [--database-url URL]

Runs one statement. The embedded store is migrated on first use; a server is used as it is.
Try: edgerl sql "select * from group_summaries order by created_at desc limit 10"

Options:
  --json               print rows as a JSON array of objects
  --csv                print rows as CSV with a header line (RFC 4180)
  --database-url URL   postgres://… or memory:// (default: DATABASE_URL; unset: the embedded store
                       in EDGERL_DATA_DIR, default .edgerl/pgdata)`,
  options: { json: { type: 'boolean' }, csv: { type: 'boolean' }, 'database-url': { type: 'string' } },
  positionals: true,
  async run({ values, positionals, env, stdout }) {
    const { openStore } = await import('../../db/drivers/open-store.ts');
    if (positionals.length !== 1 || !positionals[0]?.trim()) {
      throw new UsageError('give exactly one query, quoted: edgerl sql "select 1"');
    }
    if (values.json && values.csv) throw new UsageError('choose one of --json and --csv');
    const format: OutputFormat = values.json ? 'json' : values.csv ? 'csv' : 'table';
    const config = storeConfigFromEnv(env, { url: stringFlag(values, 'database-url') });
    const store = await openStore({
      url: config.url,
      dataDir: config.dataDir,
      migrations: config.url && config.url !== 'memory://' ? 'skip' : 'apply',
    });
    try {
      const result = await store.sql.query(positionals[0]).catch((error: unknown) => {
        throw withSqlState(error);
      });
      stdout.write(formatters[format](result));
      return 0;
    } finally {
      await store.close();
    }
  },
});

type OutputFormat = 'table' | 'json' | 'csv';

const formatters = {
  table: formatTable,
  json: formatJson,
  csv: formatCsv,
} satisfies Record<OutputFormat, (result: SqlResult) => string>;

/** One cell as text: NULL blank, JSON for arrays and objects. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function formatTable(result: SqlResult): string {
  if (result.columns.length === 0) {
    const affected = result.affectedRows;
    return `${result.command ?? 'OK'}${affected ? ` (${affected} row${affected === 1 ? '' : 's'} affected)` : ''}\n`;
  }
  const cells = result.rows.map((row) => row.map((value) => cellText(value).replaceAll('\n', '\\n')));
  const widths = result.columns.map((column, index) =>
    Math.max(column.length, ...cells.map((row) => (row[index] ?? '').length)),
  );
  // Right-align columns of numbers, including Postgres numerics, which arrive as exact text.
  const numeric = result.columns.map((_, index) => {
    const values = result.rows
      .map((row) => row[index])
      .filter((value) => value !== null && value !== undefined);
    return (
      values.length > 0 &&
      values.every((value) => typeof value === 'number' || /^-?\d+(\.\d+)?$/.test(String(value)))
    );
  });
  const line = (values: string[], align: (index: number) => 'left' | 'right' | 'center') =>
    values
      .map((value, index) => {
        const width = widths[index] ?? 0;
        const side = align(index);
        if (side === 'right') return ` ${value.padStart(width)} `;
        if (side === 'center') {
          const left = Math.floor((width - value.length) / 2);
          return ` ${' '.repeat(left)}${value}${' '.repeat(width - value.length - left)} `;
        }
        return ` ${value.padEnd(width)} `;
      })
      .join('|')
      .trimEnd();
  const count = result.rows.length;
  return [
    line([...result.columns], () => 'center'),
    widths.map((width) => '-'.repeat(width + 2)).join('+'),
    ...cells.map((row) => line(row, (index) => (numeric[index] ? 'right' : 'left'))),
    `(${count} row${count === 1 ? '' : 's'})`,
    '',
  ].join('\n');
}

export function formatJson(result: SqlResult): string {
  const objects = result.rows.map((row) =>
    Object.fromEntries(result.columns.map((column, index) => [column, row[index]])),
  );
  return `${JSON.stringify(objects, null, 2)}\n`;
}

export function formatCsv(result: SqlResult): string {
  const quote = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
  const lines = [result.columns, ...result.rows.map((row) => row.map(cellText))].map((row) =>
    row.map((value) => quote(String(value))).join(','),
  );
  return result.columns.length === 0 ? '' : `${lines.join('\r\n')}\r\n`;
}
