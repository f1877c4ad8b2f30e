// The endpoint's typed errors and their one mapping to HTTP: OpenAI's error body
// `{error: {message, type, param, code}}` with vLLM's conventions (type names such as
// "BadRequestError"/"NotFoundError", `code` = the HTTP status; vllm/entrypoints/openai/protocol.py
// ErrorInfo), so clients cannot tell this server from vLLM by its errors. The error's own `code` is
// edgerl's kebab-case name; the body's `code` is the HTTP status, as vLLM writes it.

export type ServeErrorCode =
  | 'bad-request'
  | 'unauthorized'
  | 'not-found'
  | 'payload-too-large'
  | 'too-many-requests'
  | 'unavailable'
  | 'internal';

interface CodeSpec {
  readonly status: 400 | 401 | 404 | 413 | 429 | 503 | 500;
  /** vLLM's `type` field for this status. */
  readonly type: string;
}

export const serveErrorCodes = {
  'bad-request': { status: 400, type: 'BadRequestError' },
  unauthorized: { status: 401, type: 'AuthenticationError' },
  'not-found': { status: 404, type: 'NotFoundError' },
  // vLLM has no body limit of its own; its create_error_response defaults `type` to BadRequestError
  // whatever the status, so that is what a client of vLLM would see for a refused request.
  'payload-too-large': { status: 413, type: 'BadRequestError' },
  // OpenAI's type for 429 (its SDK raises RateLimitError); vLLM has no rate limit of its own.
  'too-many-requests': { status: 429, type: 'RateLimitError' },
  unavailable: { status: 503, type: 'ServiceUnavailableError' },
  internal: { status: 500, type: 'InternalServerError' },
} satisfies Record<ServeErrorCode, CodeSpec>;

export class ServeError extends Error {
  override readonly name = 'ServeError';
  constructor(
    readonly code: ServeErrorCode,
    message: string,
    /** The request field at fault (e.g. `messages.0.content`, `model`), when there is one. */
    readonly param: string | null = null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  get status(): CodeSpec['status'] {
    return serveErrorCodes[this.code].status;
  }
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: number };
}

export function errorBody(error: ServeError): OpenAIErrorBody {
  const spec: CodeSpec = serveErrorCodes[error.code];
  return { error: { message: error.message, type: spec.type, param: error.param, code: spec.status } };
}

/** vLLM's wording for an unknown `model` (vllm/entrypoints/openai/serving_engine.py, `_check_model`). */
export function modelNotFound(model: string): ServeError {
  return new ServeError('not-found', `The model \`${model}\` does not exist.`, 'model');
}
