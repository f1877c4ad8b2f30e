// The one line `--every` and `--continuous` print for a failed cycle: credentials masked, and no SQL
// (drizzle's "Failed query: … params: …" spans lines and quotes values): an unreachable store says
// why it is unreachable, a Postgres error gives its own message and SQLSTATE.
import { withSqlState } from '../../db/database-errors.ts';
import { unreachableCause } from '../../db/store-unreachable.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { redactSecrets } from '../../protocol/redact-secrets.ts';

export function describeCycleFailure(error: unknown): string {
  const unreachable = unreachableCause(error);
  const text = unreachable
    ? `store unreachable (${errorMessage(unreachable)})`
    : errorMessage(withSqlState(error));
  return `cycle failed: ${redactSecrets(text).replace(/\s*\n\s*/g, ' ')}`;
}
