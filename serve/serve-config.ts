// `edgerl serve-model`'s one typed config as a zod schema: the model, adapters, address, key and
// batching limits, each default written once with its doc and flag. The CLI reads flags and env;
// serveModel receives the input and resolves it here. The model-dependent bound on maxModelLen is
// checked in serveModel, once the model's max_position_embeddings is known.
import { z } from 'zod';
import { backendNames, backendPreference } from '../model/backend-names.ts';
import { documented, parseConfig } from '../protocol/config-docs.ts';
import { ConfigError } from '../protocol/config-error.ts';
import { intBetween } from '../protocol/config-fields.ts';

export const serveConfigSchema = z.strictObject({
  modelDir: documented(z.string({ error: 'DIR is required' }).min(1, { error: 'DIR is required' }), {
    doc: 'Hugging Face model directory (config.json, safetensors, tokenizer)',
    flag: 'model',
    arg: 'DIR',
  }),
  adaptersDir: documented(z.string().optional(), {
    doc: 'serve each subdirectory holding an adapter_config.json, under its name',
    flag: 'adapters',
    arg: 'DIR',
  }),
  host: documented(z.string().min(1).default('127.0.0.1'), {
    doc: 'interface to listen on; 0.0.0.0 exposes it',
    source: 'local only',
    flag: 'host',
    arg: 'ADDR',
  }),
  port: documented(intBetween(0, 65_535).default(8000), {
    doc: 'TCP port; 0 picks a free one',
    source: "vLLM's",
    flag: 'port',
    arg: 'N',
  }),
  apiKey: documented(z.string().optional(), {
    doc: 'require "Authorization: Bearer KEY" on /v1 routes',
    flag: 'api-key',
    arg: 'KEY',
    env: 'EDGERL_API_KEY',
  }),
  servedModelName: documented(z.string().optional(), {
    doc: "the base model's name in requests and /v1/models",
    shownDefault: 'the --model path, as vLLM',
    flag: 'served-model-name',
    arg: 'NAME',
  }),
  maxModelLen: documented(intBetween(2, Number.MAX_SAFE_INTEGER).optional(), {
    doc: "longest prompt + output, tokens; at most the model's max_position_embeddings",
    shownDefault: "the model's max_position_embeddings",
    flag: 'max-model-len',
    arg: 'N',
  }),
  maxNumSeqs: documented(intBetween(1, 4096).default(64), {
    doc: 'most sequences decoding at once',
    source: "vLLM's 256 is sized for GPUs",
    flag: 'max-num-seqs',
    arg: 'N',
  }),
  maxPrefillTokens: documented(intBetween(1, Number.MAX_SAFE_INTEGER).default(8192), {
    doc: 'most padded prompt tokens per joining prefill',
    source: "vLLM's max_num_batched_tokens",
  }),
  maxBodyBytes: documented(intBetween(1, 2 ** 31 - 1).default(8 * 1024 * 1024), {
    doc: 'largest request body, bytes; a larger one gets 413 before it is read whole',
    source: "the edge's proxy limit (8 MiB)",
    flag: 'max-body-bytes',
    arg: 'N',
  }),
  workers: documented(intBetween(0, 64).default(0), {
    doc: 'decode worker threads, each with its own backend, model copy and share of the batch; 0 decodes in the main thread',
    source:
      'bench:serve on the shared 2-core machine: 1 or 2 workers no faster than the main thread (docs/inference-endpoint.md#decode-workers)',
    flag: 'workers',
    arg: 'N',
  }),
  workerFillRows: documented(intBetween(0, 4096).default(16), {
    doc: 'rows one decode worker takes before the next gets any; 0 spreads every batch over all workers',
    source:
      'a tiny-preset step costs about the same from 1 to 16 rows (serve/workers/row-shards.ts), and a step waits for its slowest worker',
  }),
  backend: documented(z.string().optional(), {
    doc: `TensorFlow.js backend: ${backendNames.join(' | ')}`,
    shownDefault: `the first available of ${backendPreference.join(' → ')}`,
    flag: 'backend',
    arg: 'NAME',
    env: 'EDGERL_BACKEND',
  }),
});

export type ServeConfigInput = z.input<typeof serveConfigSchema>;
export type ServeConfig = z.output<typeof serveConfigSchema>;

/** Bad settings, one message per problem, each naming the flag. */
export class ServeConfigError extends ConfigError {
  override readonly name = 'ServeConfigError';
  readonly code = 'invalid-serve-config';
  constructor(issues: readonly string[]) {
    super(issues, 'invalid serve-model config: ');
  }
}

export function resolveServeConfig(input: ServeConfigInput): ServeConfig {
  return parseConfig(serveConfigSchema, input, (issues) => new ServeConfigError(issues));
}
