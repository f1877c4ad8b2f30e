// Why generation stopped, as the edge records it on an assistant turn. OpenAI's four reasons plus
// `unknown` for anything else an endpoint sends; nothing about how a reason is parsed.
export const finishReasons = ['stop', 'length', 'tool_calls', 'content_filter', 'unknown'] as const;
export type FinishReason = (typeof finishReasons)[number];
