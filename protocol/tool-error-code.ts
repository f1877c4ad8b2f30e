// The closed set of reasons a tool turn failed, stored in the turn's `toolError` (and the `tool_error`
// column). Only the codes and what each means; which code a failure gets is the episode loop's call.

/** Each code and what it means: the table the union is drawn from. */
export const toolErrorMeanings = {
  'malformed-call': 'the arguments were not a JSON object',
  'unknown-tool': 'the model named a tool the environment does not have',
  'invalid-arguments': "the arguments did not match the tool's parameter schema",
  'tool-error': 'the tool threw',
  'tool-timeout': 'the tool ran past its timeout',
  refused: 'the tool declined on purpose (e.g. a write query)',
  'call-limit':
    "not run: the reply made more tool calls than a turn may run (the edge's maxToolCallsPerTurn)",
  'tool-budget': "not run: the episode had spent its tool time (the edge's toolBudgetMs)",
} as const;
export type ToolErrorCode = keyof typeof toolErrorMeanings;

export const toolErrorCodes = Object.keys(toolErrorMeanings) as [ToolErrorCode, ...ToolErrorCode[]];
