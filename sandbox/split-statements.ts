// Splits SQL text into statements at top-level semicolons, skipping those inside quotes, quoted
// identifiers, dollar-quoted bodies and comments (lexical rules: Postgres manual §4.1 "Lexical
// Structure"). Enough to count statements and read each one's first keyword; it is not a parser.

export interface SqlStatement {
  /** The statement text, without the separating semicolon, trimmed. */
  readonly text: string;
  /** The first keyword, lower-cased (`select`, `with`, `insert`, …), after comments and `(`. */
  readonly keyword: string;
}

export function splitStatements(text: string): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let start = 0;
  let code = ''; // the current statement with comments and quoted text blanked, for the keyword
  let index = 0;
  const flush = (end: number) => {
    const keyword = /[A-Za-z_]+/.exec(code.replace(/^[\s(]+/, ''))?.[0]?.toLowerCase() ?? '';
    const body = text.slice(start, end).trim();
    if (keyword !== '' || /[^\s;]/.test(code)) statements.push({ text: body, keyword });
    code = '';
  };
  while (index < text.length) {
    const char = text[index] as string;
    const next = text[index + 1];
    if (char === '-' && next === '-') {
      const end = text.indexOf('\n', index);
      index = end === -1 ? text.length : end + 1;
      code += ' ';
    } else if (char === '/' && next === '*') {
      index = skipBlockComment(text, index);
      code += ' ';
    } else if (char === "'") {
      // E'…' strings take backslash escapes; `e` must stand alone (not the end of `date'…'`).
      const escapes = /[Ee]/.test(text[index - 1] ?? '') && !/[A-Za-z0-9_$]/.test(text[index - 2] ?? '');
      index = skipQuoted(text, index, "'", escapes);
      code += " '' ";
    } else if (char === '"') {
      index = skipQuoted(text, index, '"', false);
      code += ' "" ';
    } else if (char === '$' && !/[A-Za-z0-9_]/.test(text[index - 1] ?? '')) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(index))?.[0];
      if (tag) {
        const end = text.indexOf(tag, index + tag.length);
        index = end === -1 ? text.length : end + tag.length;
        code += ' $$ ';
      } else {
        code += char;
        index += 1;
      }
    } else if (char === ';') {
      flush(index);
      index += 1;
      start = index;
    } else {
      code += char;
      index += 1;
    }
  }
  flush(text.length);
  return statements;
}

/** Index just past the closing quote; a doubled quote is an escaped one, as is a backslash in E'…'. */
function skipQuoted(text: string, open: number, quote: string, backslashEscapes: boolean): number {
  let index = open + 1;
  while (index < text.length) {
    const char = text[index];
    if (backslashEscapes && char === '\\') index += 2;
    else if (char === quote && text[index + 1] === quote) index += 2;
    else if (char === quote) return index + 1;
    else index += 1;
  }
  return text.length;
}

/** Index just past the end of a block comment; Postgres block comments nest. */
function skipBlockComment(text: string, open: number): number {
  let depth = 0;
  let index = open;
  while (index < text.length) {
    if (text[index] === '/' && text[index + 1] === '*') {
      depth += 1;
      index += 2;
    } else if (text[index] === '*' && text[index + 1] === '/') {
      depth -= 1;
      index += 2;
      if (depth === 0) return index;
    } else {
      index += 1;
    }
  }
  return text.length;
}
