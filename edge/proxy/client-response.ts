// What the proxy returns to its client: the upstream completion with the tool-call ids the turn was
// stored with, and without the extras the proxy asked for on its own account (`logprobs`, vLLM's
// `token_ids` / `prompt_token_ids`) unless the client asked for them too. Pure.

export interface ClientAsked {
  readonly logprobs: boolean;
  readonly tokenIds: boolean;
}

type Json = Record<string, unknown>;

export function clientResponse(upstream: Json, asked: ClientAsked, toolCallIds: readonly string[]): Json {
  const choices = Array.isArray(upstream.choices) ? upstream.choices : [];
  const result: Json = {
    ...upstream,
    choices: choices.map((choice: unknown, position) => {
      if (typeof choice !== 'object' || choice === null) return choice;
      const copy: Json = { ...(choice as Json) };
      if (!asked.logprobs && 'logprobs' in copy) copy.logprobs = null;
      if (!asked.tokenIds) delete copy.token_ids;
      if (position === 0) copy.message = withIds(copy.message, toolCallIds);
      return copy;
    }),
  };
  if (!asked.tokenIds) delete result.prompt_token_ids;
  return result;
}

function withIds(message: unknown, ids: readonly string[]): unknown {
  if (typeof message !== 'object' || message === null) return message;
  const calls = (message as Json).tool_calls;
  if (!Array.isArray(calls) || calls.length === 0) return message;
  return {
    ...(message as Json),
    tool_calls: calls.map((call: unknown, n) =>
      typeof call === 'object' && call !== null && ids[n] ? { ...(call as Json), id: ids[n] } : call,
    ),
  };
}

/**
 * One streamed chunk as the client should see it: the same removals as `clientResponse`, tool-call
 * ids filled in where the endpoint sent empty ones (the stored turn gets the same ids), and the
 * usage-only chunk dropped unless the client asked for it. Undefined: send nothing.
 */
export function clientChunk(
  chunk: Json,
  asked: ClientAsked & { readonly usage: boolean },
  turnIndex: number,
): Json | undefined {
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  if (choices.length === 0 && 'usage' in chunk && !asked.usage) return undefined;
  const result: Json = {
    ...chunk,
    choices: choices.map((choice: unknown) => {
      if (typeof choice !== 'object' || choice === null) return choice;
      const copy: Json = { ...(choice as Json) };
      if (!asked.logprobs && 'logprobs' in copy) copy.logprobs = null;
      if (!asked.tokenIds) delete copy.token_ids;
      const delta = copy.delta as Json | undefined;
      if (delta && Array.isArray(delta.tool_calls)) {
        copy.delta = {
          ...delta,
          tool_calls: delta.tool_calls.map((call: unknown, position) => {
            if (typeof call !== 'object' || call === null || (call as Json).id !== '') return call;
            const n = typeof (call as Json).index === 'number' ? ((call as Json).index as number) : position;
            return { ...(call as Json), id: `call_${turnIndex}_${n + 1}` };
          }),
        };
      }
      return copy;
    }),
  };
  if (!asked.tokenIds) delete result.prompt_token_ids;
  if (!asked.usage && choices.length > 0) delete result.usage;
  return result;
}
