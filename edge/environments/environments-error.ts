// Why a set of user environments cannot be used: one typed error with a stable code, for the CLI to
// print and for tests to match on. Messages say what to fix; the cause (an import's error) is kept.

export type EnvironmentsErrorCode =
  /** The module file is not there. */
  | 'missing-file'
  /** Importing the module threw (a syntax error, a failed import, defineEnvironment refusing). */
  | 'import-failed'
  /** Neither a named `environments` nor a default export, or one that is not a record or array. */
  | 'bad-export'
  /** An entry is not what defineEnvironment returns, or a record key differs from its name. */
  | 'not-an-environment'
  /** Two environments share a name (within the module, or with a shipped one). */
  | 'name-clash';

export class EnvironmentsError extends Error {
  override readonly name = 'EnvironmentsError';
  readonly code: EnvironmentsErrorCode;

  constructor(code: EnvironmentsErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}
