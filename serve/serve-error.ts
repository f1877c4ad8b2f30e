// The endpoint's typed errors and their one mapping to HTTP: OpenAI's error body
// `{error: {message, type, param, code}}` with vLLM's conventions (type names such as
// "BadRequestError"/"NotFoundError", `code` = the HTTP status; vllm/entrypoints/openai/protocol.py
// ErrorInfo), so clients cannot tell this server from vLLM by its errors.

export type ServeErrorKind = 'bad-request' | 'unauthorized' | 'not-found' | 'unavailable' | 'internal';

interface KindSpec {
  readonly status: 400 | 401 | 404 | 503 | 500;
  /** vLLM's `type` field for this status. */
  readonly type: string;
}

export const serveErrorKinds = {
  'bad-request': { status: 400, type: 'BadRequestError' },
  unauthorized: { status: 401, type: 'AuthenticationError' },
  'not-found': { status: 404, type: 'NotFoundError' },
  unavailable: { status: 503, type: 'ServiceUnavailableError' },
  internal: { status: 500, type: 'InternalServerError' },
} satisfies Record<ServeErrorKind, KindSpec>;

export class ServeError extends Error {
  override readonly name = 'ServeError';
  constructor(
    readonly kind: ServeErrorKind,
    message: string,
    /** The request field at fault (e.g. `messages.0.content`, `model`), when there is one. */
    readonly param: string | null = null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  get status(): KindSpec['status'] {
    return serveErrorKinds[this.kind].status;
  }
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: number };
}

export function errorBody(error: ServeError): OpenAIErrorBody {
  const spec: KindSpec = serveErrorKinds[error.kind];
  return { error: { message: error.message, type: spec.type, param: error.param, code: spec.status } };
}

/** vLLM's wording for an unknown `model` (vllm/entrypoints/openai/serving_engine.py, `_check_model`). */
export function modelNotFound(model: string): ServeError {
  return new ServeError('not-found', `The model \`${model}\` does not exist.`, 'model');
}
