// `edgerl sandbox setup`: provisions the SQL agent's sandbox database on a Postgres server (database,
// reader role, seed, grants, revokes; idempotent) and prints the reader URL for EDGERL_SQL_DATABASE_URL.
import { defaultReaderRole, defaultSandboxDatabase } from '../../sandbox/sandbox-names.ts';
import { defineCommand, stringFlag, UsageError } from '../command.ts';

export const sandboxSetupCommand = defineCommand({
  usage: `Usage: edgerl sandbox setup --admin-url URL [--database NAME] [--role NAME] [--password P]

Creates (or updates) the SQL sandbox: a database holding the sample shop and a login role that can
read it and nothing else. Prints the reader's URL: set it as EDGERL_SQL_DATABASE_URL (never the
store's URL).
Run it again to reapply the privileges; without --password the password is rotated.

Options:
  --admin-url URL   a role that may create databases and roles (on Neon: the project owner)
  --database NAME   default ${defaultSandboxDatabase}
  --role NAME       default ${defaultReaderRole}
  --password P      default: generated (24 random bytes)`,
  options: {
    'admin-url': { type: 'string' },
    database: { type: 'string' },
    role: { type: 'string' },
    password: { type: 'string' },
  },
  async run({ values, stdout, stderr }) {
    const adminUrl = stringFlag(values, 'admin-url');
    if (!adminUrl) throw new UsageError('--admin-url is required: postgres://owner@host/postgres');
    const database = stringFlag(values, 'database');
    const role = stringFlag(values, 'role');
    const password = stringFlag(values, 'password');
    const { setupSandbox } = await import('../../sandbox/node/setup-sandbox.ts');
    const setup = await setupSandbox({
      adminUrl,
      ...(database ? { database } : {}),
      ...(role ? { role } : {}),
      ...(password ? { password } : {}),
    });
    const made = [
      setup.createdDatabase ? 'database created' : 'database kept',
      setup.createdRole ? 'role created' : 'role updated',
      setup.seeded ? 'seeded' : 'seed kept',
    ];
    stderr.write(`sandbox ${setup.database} for ${setup.role}: ${made.join(', ')}\n`);
    if (setup.stillExecutable.length > 0) {
      stderr.write(
        `warning: these revokes did not take (the admin is not their grantor); the per-query rollback and reset still apply: ${setup.stillExecutable.join(', ')}\n`,
      );
    }
    if (setup.stillReadable.length > 0) {
      stderr.write(
        `warning: the reader can still read these catalogs (the admin is not their grantor): ${setup.stillReadable.join(', ')}\n`,
      );
    }
    stdout.write(`${setup.readerUrl}\n`);
    return 0;
  },
});
