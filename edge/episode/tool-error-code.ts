// The closed set of reasons a tool turn failed, stored in the turn's `toolError`.

export const toolErrorCodes = [
  /** The arguments were not a JSON object. */
  'malformed-call',
  /** The model named a tool the environment does not have. */
  'unknown-tool',
  /** The arguments did not match the tool's parameter schema. */
  'invalid-arguments',
  /** The tool threw. */
  'tool-error',
  /** The tool ran past its timeout. */
  'tool-timeout',
  /** The tool declined on purpose (e.g. a write query). */
  'refused',
] as const;
export type ToolErrorCode = (typeof toolErrorCodes)[number];
