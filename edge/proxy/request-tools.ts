// The tool list a proxy request makes the trajectory store: the request's `tools` as protocol's
// ToolSpec (name, description, parameters; fields such as `strict` are forwarded upstream but not
// stored). Pure; the write is the caller's.
import { type ToolSpec, toolSpecListSchema } from '../../protocol/chat.ts';
import { formatIssues } from '../../protocol/format-issues.ts';
import { jsonEqual } from '../../protocol/canonical-json.ts';
import { invalidField } from '../http/api-error.ts';

/**
 * The list to store, or undefined when the stored one stands. A request with tools replaces a
 * different stored list (the training render uses the latest tools the client offered); a request
 * without tools leaves a stored list alone (a closing call without tools does not erase what the
 * earlier turns were offered) and records an empty one where none is stored yet.
 */
export function requestTools(requested: unknown, stored: readonly ToolSpec[] | null): ToolSpec[] | undefined {
  if (requested === undefined || requested === null) return stored === null ? [] : undefined;
  const parsed = toolSpecListSchema.safeParse(requested);
  if (!parsed.success) throw invalidField('tools', formatIssues(parsed.error));
  if (parsed.data.length === 0 && stored !== null) return undefined;
  return stored !== null && jsonEqual(stored, parsed.data) ? undefined : parsed.data;
}
