// The output items of a Responses object (https://platform.openai.com/docs/api-reference/responses/object):
// an assistant `message` with one `output_text` part, and a `function_call`. Shared by the whole
// response and the stream, which sends items first `in_progress`, then `completed`. Pure.

type Json = Record<string, unknown>;

/** Chat logprobs (`{content: [{token, logprob, bytes, top_logprobs}]}`) hold the same entries as Responses'. */
export function logprobsOf(value: unknown): Json[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const content = (value as Json).content;
  return Array.isArray(content) ? (content as Json[]) : undefined;
}

export function messageItem(
  id: string,
  text: string,
  logprobs: readonly Json[] | undefined,
  status: 'in_progress' | 'completed',
): Json {
  return {
    type: 'message',
    id,
    status,
    role: 'assistant',
    content: status === 'in_progress' ? [] : [outputText(text, logprobs)],
  };
}

export function outputText(text: string, logprobs: readonly Json[] | undefined): Json {
  return { type: 'output_text', text, annotations: [], ...(logprobs ? { logprobs } : {}) };
}

export function functionCallItem(
  id: string,
  callId: string,
  name: string,
  args: string,
  status: 'in_progress' | 'completed',
): Json {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
}
