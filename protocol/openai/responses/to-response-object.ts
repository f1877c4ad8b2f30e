// A chat completion as the Responses object a non-streamed POST /v1/responses returns: choice 0's
// text as a `message` item with one `output_text` part (its logprobs there, as vLLM puts them), each
// tool call as a `function_call` item whose `call_id` is the chat tool call's id, usage renamed, and a
// `length` finish as status `incomplete`. vLLM's `prompt_token_ids` and `token_ids` stay on the
// response, when the completion carries them. Pure.
import { functionCallItem, logprobsOf, messageItem } from './output-items.ts';
import {
  finishStatus,
  outputItemId,
  type ResponseContext,
  responseEnvelope,
  responseUsage,
} from './response-envelope.ts';

type Json = Record<string, unknown>;

export function toResponseObject(completion: Json, context: ResponseContext): Json {
  const choice = (Array.isArray(completion.choices) ? completion.choices[0] : undefined) as Json | undefined;
  const message = (choice?.message ?? {}) as Json;
  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as Json[]) : [];
  const text = typeof message.content === 'string' ? message.content : null;
  const logprobs = logprobsOf(choice?.logprobs);
  const output: Json[] = [];
  // An empty text beside tool calls is no message; a reply of nothing at all is an empty one.
  if ((text !== null && text !== '') || toolCalls.length === 0) {
    output.push(messageItem(outputItemId(context, 'msg', 0), text ?? '', logprobs, 'completed'));
  }
  toolCalls.forEach((call, position) => {
    const fn = (call.function ?? {}) as Json;
    output.push(
      functionCallItem(
        outputItemId(context, 'fc', position),
        String(call.id ?? ''),
        String(fn.name ?? ''),
        String(fn.arguments ?? ''),
        'completed',
      ),
    );
  });
  return responseEnvelope(context, {
    model: typeof completion.model === 'string' ? completion.model : (context.request.model ?? ''),
    ...finishStatus(choice?.finish_reason),
    output,
    usage: responseUsage(completion.usage),
    ...(Array.isArray(completion.prompt_token_ids) ? { prompt_token_ids: completion.prompt_token_ids } : {}),
    ...(Array.isArray(choice?.token_ids) ? { token_ids: choice.token_ids } : {}),
  });
}
