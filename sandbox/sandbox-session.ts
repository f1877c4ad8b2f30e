// What the sandbox needs from one database connection: run a statement with parameters (always the
// extended protocol, which holds one statement: a second one after a `;` is a syntax error the server
// raises, not a lexer's guess) and return raw rows with each column's type OID.

export interface SessionField {
  readonly name: string;
  /** pg_type.oid of the column. */
  readonly typeId: number;
}

export interface SessionResult {
  readonly fields: readonly SessionField[];
  readonly rows: readonly (readonly unknown[])[];
}

export interface SandboxSession {
  /** Text built from a query always carries a parameter: that forces the extended protocol on every driver. */
  query(text: string, params: readonly unknown[]): Promise<SessionResult>;
}
