// The sandbox database's and its reader role's default names on a Postgres server (`edgerl sandbox
// setup`), apart from node/setup-sandbox.ts (pg) so that the command's usage shows them without loading it.
export const defaultSandboxDatabase = 'edgerl_sql';
export const defaultReaderRole = 'edgerl_sql_reader';
