// A cheap static check of a query before the database sees it: one statement, SELECT or WITH only,
// no write keywords, no known side-effecting functions. Not the security boundary (the read-only
// transaction and the statement timeout are); it makes refusals clear and early.

export type SqlCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Enough for any question about the sample shop; longer text is more likely a runaway generation. */
export const maxQueryChars = 4_000;

/** Words that only appear in statements that write, lock or change settings. */
const writeWords = new Set(
  (
    'insert update delete merge truncate drop alter create grant revoke copy call do vacuum analyze ' +
    'cluster reindex refresh lock set reset listen notify prepare execute deallocate discard comment ' +
    'security into'
  ).split(' '),
);

/** Functions that sleep, write, signal other sessions or read files: refused by name when called. */
const forbiddenFunctions = new Set(
  (
    'pg_sleep pg_sleep_for pg_sleep_until set_config nextval setval pg_terminate_backend ' +
    'pg_cancel_backend pg_reload_conf pg_read_file pg_read_binary_file pg_ls_dir pg_stat_file ' +
    'lo_import lo_export dblink dblink_exec pg_advisory_lock pg_advisory_xact_lock ' +
    // A transaction id per call, even read-only; a snapshot another session could import.
    'txid_current pg_current_xact_id pg_export_snapshot pg_lock_status'
  ).split(' '),
);

/**
 * Catalogs about the server rather than the shop: its databases, roles and other sessions. Refused
 * by name, qualified (`pg_catalog.pg_roles`) or not; the reader's privileges close them too
 * (sandbox/reader-privileges.ts revokedCatalogRelations), quoted or escaped spellings included.
 */
const forbiddenRelations = new Set(
  (
    'pg_database pg_stat_database pg_stat_database_conflicts pg_roles pg_user pg_group pg_auth_members ' +
    'pg_authid pg_shadow pg_locks pg_stat_activity pg_stat_ssl pg_stat_gssapi'
  ).split(' '),
);

interface Lexed {
  /** Bare words outside literals, comments and quoted identifiers, lower-cased, with what follows them. */
  readonly words: { readonly word: string; readonly calls: boolean; readonly qualified: boolean }[];
  /** Statements between top-level semicolons that hold more than whitespace and comments. */
  readonly statementCount: number;
}

export function checkReadOnlySql(sql: string): SqlCheck {
  if (sql.trim() === '') return refuse('the query is empty');
  if (sql.length > maxQueryChars)
    return refuse(`the query is ${sql.length} characters long; the limit is ${maxQueryChars}`);
  const lexed = lex(sql);
  if (typeof lexed === 'string') return refuse(lexed);
  if (lexed.statementCount > 1) {
    return refuse(`only one statement per query is allowed, found ${lexed.statementCount}`);
  }
  const first = lexed.words[0]?.word;
  if (first !== 'select' && first !== 'with') {
    return refuse(
      `only SELECT or WITH queries are allowed, this one starts with ${first ? first.toUpperCase() : 'no keyword'}`,
    );
  }
  for (const { word, calls, qualified } of lexed.words) {
    if (forbiddenRelations.has(word))
      return refuse(`${word} describes the server, not the shop; only the shop tables can be read`);
    if (qualified) continue; // `t.update` is a column, not a statement
    if (writeWords.has(word))
      return refuse(`the database is read-only; ${word.toUpperCase()} is not allowed`);
    if (calls && forbiddenFunctions.has(word)) return refuse(`the function ${word}() is not allowed`);
  }
  return { ok: true };
}

function refuse(reason: string): SqlCheck {
  return { ok: false, reason };
}

/** Splits PostgreSQL text into words and statements, skipping literals and comments; a string on error. */
function lex(sql: string): Lexed | string {
  const words: { word: string; calls: boolean; qualified: boolean }[] = [];
  let statementCount = 0;
  let inStatement = false;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    const isComment = (ch === '-' && next === '-') || (ch === '/' && next === '*');
    if (!isComment && ch !== ';' && !/\s/.test(ch) && !inStatement) {
      inStatement = true;
      statementCount += 1;
    }
    if (ch === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === '/' && next === '*') {
      const end = skipBlockComment(sql, i);
      if (end === -1) return 'unterminated /* comment';
      i = end;
    } else if (ch === "'") {
      const escapes = i > 0 && /[eE]/.test(sql[i - 1] as string) && !/[A-Za-z0-9_]/.test(sql[i - 2] ?? ' ');
      const end = skipQuoted(sql, i, "'", escapes);
      if (end === -1) return 'unterminated string literal';
      i = end;
    } else if (ch === '"') {
      const end = skipQuoted(sql, i, '"', false);
      if (end === -1) return 'unterminated quoted identifier';
      i = end;
    } else if (ch === '$' && /[A-Za-z_$]/.test(next ?? '') && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? ' ')) {
      const tag = /^\$[A-Za-z_]*[A-Za-z0-9_]*\$/.exec(sql.slice(i))?.[0];
      if (!tag) {
        i += 1;
        continue;
      }
      const end = sql.indexOf(tag, i + tag.length);
      if (end === -1) return `unterminated dollar-quoted string ${tag}`;
      i = end + tag.length;
    } else if (ch === ';') {
      inStatement = false;
      i += 1;
    } else if (/[A-Za-z_]/.test(ch)) {
      const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i))?.[0] ?? ch;
      const after = /^\s*(.)/.exec(sql.slice(i + word.length))?.[1];
      const before = /(.)\s*$/.exec(sql.slice(0, i))?.[1];
      words.push({ word: word.toLowerCase(), calls: after === '(', qualified: before === '.' });
      i += word.length;
    } else {
      i += 1;
    }
  }
  return { words, statementCount };
}

/** Index just past the closing quote; a doubled quote is an escaped one. */
function skipQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  for (let i = start + 1; i < sql.length; i++) {
    const ch = sql[i];
    if (backslashEscapes && ch === '\\') {
      i += 1;
    } else if (ch === quote) {
      if (sql[i + 1] === quote) i += 1;
      else return i + 1;
    }
  }
  return -1;
}

/** PostgreSQL block comments nest. */
function skipBlockComment(sql: string, start: number): number {
  let depth = 0;
  for (let i = start; i < sql.length - 1; i++) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth += 1;
      i += 1;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth -= 1;
      i += 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
