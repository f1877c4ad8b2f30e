// Maps the Postgres errors a store write can provoke to StoreError codes, by SQLSTATE (Postgres
// manual, Appendix A "PostgreSQL Error Codes"). drizzle wraps driver errors (DrizzleQueryError, whose
// message holds the SQL), so the SQLSTATE is looked up along the `cause` chain; the SQL never reaches
// the StoreError's message.
import { StoreError, type StoreErrorCode } from './errors.ts';

const codeBySqlState: Readonly<Record<string, StoreErrorCode>> = {
  '23505': 'conflict', // unique_violation
  '23503': 'not-found', // foreign_key_violation: the referenced row does not exist
  '23514': 'validation', // check_violation
  '23502': 'validation', // not_null_violation
  '22P02': 'validation', // invalid_text_representation
  '22P05': 'validation', // untranslatable_character (e.g. \u0000 in jsonb)
  '22021': 'validation', // character_not_in_repertoire (e.g. a NUL byte in text)
  '22003': 'validation', // numeric_value_out_of_range
  '54001': 'validation', // statement_too_complex: "stack depth limit exceeded" (JSON nested too deep)
};

/** Postgres's message for these names the offending character or token from the value, and no field;
 *  parseInput catches them first with the field named, so a write that still hits one gets this. */
const ownMessageBySqlState: Readonly<Record<string, string>> = {
  '22P05': 'text Postgres cannot store (a NUL character, U+0000, or similar)',
  '22021': 'text Postgres cannot store (a NUL character or invalid UTF-8)',
  '54001': 'a value nested too deep for Postgres',
};

interface PostgresErrorFields {
  code: string;
  message: string;
  detail?: string;
  constraint?: string;
}

/** The first error along the cause chain that carries a Postgres SQLSTATE. */
export function findPostgresError(error: unknown): PostgresErrorFields | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
      return current as unknown as PostgresErrorFields;
    current = current.cause;
  }
  return undefined;
}

/** A StoreError for known constraint failures; any other error is returned unchanged. */
export function toStoreError(error: unknown): unknown {
  if (error instanceof StoreError) return error;
  const postgres = findPostgresError(error);
  const code = postgres ? codeBySqlState[postgres.code] : undefined;
  if (!postgres || !code) return error;
  const where = postgres.constraint ? ` (${postgres.constraint})` : '';
  const message = `${ownMessageBySqlState[postgres.code] ?? postgres.detail ?? postgres.message}${where}`;
  return new StoreError(code, message, { cause: error });
}

/** For one-line reports (the CLI): Postgres's own message and SQLSTATE instead of drizzle's "Failed query: …". */
export function withSqlState(error: unknown): unknown {
  const postgres = findPostgresError(error);
  if (!postgres || error instanceof StoreError) return error;
  return new Error(`${postgres.message} (SQLSTATE ${postgres.code})`, { cause: error });
}
