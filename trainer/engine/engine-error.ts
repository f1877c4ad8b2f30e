// The engines' typed error: a stable code from one vocabulary (docs/torch-engine.md, "Error codes";
// `engine-exited` and `engine-setup` are the trainer side's own), the message, and the cause.

export const engineErrorCodes = [
  'engine-setup',
  'engine-exited',
  'engine-bad-frame',
  'engine-requirements',
  'engine-protocol',
  'engine-bad-request',
  'engine-state',
  'engine-nonfinite-gradient',
  'engine-out-of-memory',
  'engine-internal',
] as const;
export type EngineErrorCode = (typeof engineErrorCodes)[number];

export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An engine reply's code, or engine-internal for one this trainer does not know. */
export function engineErrorCode(code: unknown): EngineErrorCode {
  return (engineErrorCodes as readonly unknown[]).includes(code)
    ? (code as EngineErrorCode)
    : 'engine-internal';
}
