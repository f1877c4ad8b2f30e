// Request fields that chat and text completions share (OpenAI's plus vLLM's extra sampling
// parameters, vllm/entrypoints/openai/protocol.py), and their resolution into the settings the
// choices run with. Defaults are vLLM's: temperature 1, top_p 1, top_k off, EOS stops, special tokens
// skipped in text. Parameters vLLM has and this endpoint does not implement are accepted only at their
// neutral value, so a request never silently means something else here than on vLLM; fields neither
// knows are ignored, as vLLM ignores them.
import { z } from 'zod';
import type { SamplingParams } from '../model/sampler.ts';
import { compileGuided, type Guided, type GuidedSpec } from './guided-decoding.ts';
import { ServeError } from './serve-error.ts';

/** vLLM's default --max-logprobs. */
export const maxLogprobs = 20;

const unsupported = (neutral: number | boolean) =>
  z
    .union([z.number(), z.boolean()])
    .nullish()
    .refine((value) => value === null || value === undefined || value === neutral, {
      message: `is not supported by edgerl serve-model; only ${neutral} (the default) is accepted`,
    });

const unsupportedText = z
  .string()
  .nullish()
  .refine((value) => value == null, { message: 'is not supported by edgerl serve-model' });

const structuredKeys = new Set(['choice', 'json', 'json_object']);

export const samplingFields = {
  model: z.string().nullish(),
  n: z.number().int().min(1).max(128).nullish(),
  temperature: z.number().min(0).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  /** vLLM: -1 or 0 turns top-k off. */
  top_k: z.number().int().min(-1).nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  stop_token_ids: z.array(z.number().int().min(0)).nullish(),
  ignore_eos: z.boolean().nullish(),
  skip_special_tokens: z.boolean().nullish(),
  include_stop_str_in_output: z.boolean().nullish(),
  logit_bias: z.record(z.string(), z.number().min(-100).max(100)).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  return_token_ids: z.boolean().nullish(),
  return_tokens_as_token_ids: z.boolean().nullish(),
  structured_outputs: z
    .object({
      choice: z.array(z.string().min(1)).min(1).nullish(),
      json: z.union([z.string(), z.boolean(), z.record(z.string(), z.unknown())]).nullish(),
      json_object: z.boolean().nullish(),
    })
    .catchall(z.unknown())
    .nullish()
    .refine(
      (value) => !value || Object.keys(value).every((key) => structuredKeys.has(key) || value[key] == null),
      {
        message:
          'only `choice`, `json` and `json_object` are supported by edgerl serve-model (no regex, grammar or structural_tag)',
      },
    ),
  /** OpenAI's structured outputs: plain text, any JSON object, or JSON following a schema (guided decoding). */
  response_format: z
    .object({
      type: z.enum(['text', 'json_object', 'json_schema']),
      json_schema: z
        .object({
          name: z.string().nullish(),
          description: z.string().nullish(),
          schema: z.record(z.string(), z.unknown()).nullish(),
          strict: z.boolean().nullish(),
        })
        .nullish(),
    })
    .nullish(),
  /** vLLM's earlier names for structured_outputs.choice and .json. */
  guided_choice: z.array(z.string().min(1)).min(1).nullish(),
  guided_json: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  guided_regex: unsupportedText,
  guided_grammar: unsupportedText,
  frequency_penalty: unsupported(0),
  presence_penalty: unsupported(0),
  repetition_penalty: unsupported(1),
  min_p: unsupported(0),
  min_tokens: unsupported(0),
  use_beam_search: unsupported(false),
  best_of: unsupported(1),
  prompt_logprobs: unsupported(0),
  echo: unsupported(false),
};

type SamplingFieldValues = z.infer<z.ZodObject<typeof samplingFields>>;

/** How every choice of one request is generated (max_tokens is resolved per prompt). */
export interface GenerationSettings {
  readonly n: number;
  readonly sampling: SamplingParams;
  /** Choice i samples with seed + i; undefined: a random seed per choice. */
  readonly seed: number | undefined;
  readonly stopStrings: readonly string[];
  readonly stopTokenIds: readonly number[];
  readonly ignoreEos: boolean;
  readonly skipSpecialTokens: boolean;
  readonly includeStopStrInOutput: boolean;
  readonly logitBias: ReadonlyMap<number, number>;
  /** Whether to return per-token logprobs, and how many alternatives per token. */
  readonly logprobs: boolean;
  readonly topLogprobs: number;
  readonly returnTokenIds: boolean;
  readonly tokensAsTokenIds: boolean;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** Guided decoding: what the output must follow (compiled), or undefined for free text. */
  readonly guided: Guided | undefined;
}

/** `tools`: guided tool calls the chat route asks for (tool_choice), counted with the body's own. */
export function resolveSettings(
  body: SamplingFieldValues,
  logprobs: { enabled: boolean; top: number },
  vocabSize: number,
  tools: readonly GuidedRequest[] = [],
): GenerationSettings {
  const logitBias = new Map<number, number>();
  for (const [key, bias] of Object.entries(body.logit_bias ?? {})) {
    const id = Number(key);
    if (!/^\d+$/.test(key) || id >= vocabSize) {
      throw new ServeError(
        'bad-request',
        `logit_bias: "${key}" is not a token id in [0, ${vocabSize})`,
        'logit_bias',
      );
    }
    logitBias.set(id, bias);
  }
  const stopTokenIds = body.stop_token_ids ?? [];
  const outside = stopTokenIds.find((id) => id >= vocabSize);
  if (outside !== undefined) {
    throw new ServeError(
      'bad-request',
      `stop_token_ids: ${outside} is outside the vocabulary [0, ${vocabSize})`,
      'stop_token_ids',
    );
  }
  if (logprobs.top > maxLogprobs) {
    throw new ServeError(
      'bad-request',
      `at most ${maxLogprobs} logprobs per token are returned, ${logprobs.top} were requested`,
      'top_logprobs',
    );
  }
  if (body.stream_options && !body.stream) {
    throw new ServeError(
      'bad-request',
      'stream_options can only be given when stream is true',
      'stream_options',
    );
  }
  const stop = body.stop ?? [];
  return {
    n: body.n ?? 1,
    sampling: {
      temperature: body.temperature ?? 1,
      topP: body.top_p ?? 1,
      topK: Math.max(0, body.top_k ?? 0),
    },
    seed: body.seed ?? undefined,
    stopStrings: (typeof stop === 'string' ? [stop] : stop).filter((s) => s.length > 0),
    stopTokenIds,
    ignoreEos: body.ignore_eos ?? false,
    skipSpecialTokens: body.skip_special_tokens ?? true,
    includeStopStrInOutput: body.include_stop_str_in_output ?? false,
    logitBias,
    logprobs: logprobs.enabled,
    topLogprobs: logprobs.top,
    returnTokenIds: body.return_token_ids ?? false,
    tokensAsTokenIds: body.return_tokens_as_token_ids ?? false,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    guided: onlyGuided([...structuredSpecs(body), ...tools]),
  };
}

/** A guided-decoding request from one of its spellings, with the field that gave it. */
function structuredSpecs(body: SamplingFieldValues): GuidedRequest[] {
  const specs: GuidedRequest[] = [];
  const structured = body.structured_outputs;
  const choice = (choices: readonly string[], field: string) =>
    specs.push({ spec: { kind: 'choice', choices }, field });
  const schema = (value: unknown, field: string) => {
    let parsed = value;
    if (typeof value === 'string') {
      try {
        parsed = JSON.parse(value);
      } catch {
        throw new ServeError(
          'bad-request',
          `${field}: is not a JSON schema (a string that is not JSON)`,
          field,
        );
      }
    }
    specs.push({ spec: { kind: 'json-schema', schema: parsed, field }, field });
  };
  if (structured?.choice) choice(structured.choice, 'structured_outputs.choice');
  if (body.guided_choice) choice(body.guided_choice, 'guided_choice');
  if (structured?.json != null) schema(structured.json, 'structured_outputs.json');
  if (body.guided_json != null) schema(body.guided_json, 'guided_json');
  if (structured?.json_object)
    specs.push({ spec: { kind: 'json-object' }, field: 'structured_outputs.json_object' });
  const format = body.response_format;
  if (format?.type === 'json_object') specs.push({ spec: { kind: 'json-object' }, field: 'response_format' });
  if (format?.type === 'json_schema') {
    const given = format.json_schema?.schema;
    if (!given) {
      throw new ServeError(
        'bad-request',
        'response_format.json_schema.schema: a JSON schema is required with {"type": "json_schema"}',
        'response_format',
      );
    }
    schema(given, 'response_format.json_schema.schema');
  }
  return specs;
}

/** At most one guided-decoding request (vLLM: "You can only use one kind of structured outputs"). */
function onlyGuided(specs: readonly GuidedRequest[]): Guided | undefined {
  if (specs.length > 1) {
    throw new ServeError(
      'bad-request',
      `only one kind of guided decoding per request; got ${specs.map((s) => s.field).join(' and ')}`,
      specs[1]?.field ?? null,
    );
  }
  const first = specs[0];
  return first ? compileGuided(first.spec) : undefined;
}

/** A guided-decoding request and the field that made it (for errors). */
export interface GuidedRequest {
  readonly spec: GuidedSpec;
  readonly field: string;
}

/**
 * max_tokens for one prompt: the request's, else what the context window leaves (vLLM's default for
 * chat). Errors name both numbers, in vLLM's words (vllm/entrypoints/openai/serving_engine.py,
 * `_validate_input`).
 */
export function resolveMaxTokens(
  requested: number | undefined,
  promptLength: number,
  maxModelLen: number,
  field: { prompt: string; maxTokens: string },
): number {
  if (promptLength >= maxModelLen) {
    throw new ServeError(
      'bad-request',
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptLength} input tokens. Please reduce the length of the input.`,
      field.prompt,
    );
  }
  if (requested === undefined) return maxModelLen - promptLength;
  if (promptLength + requested > maxModelLen) {
    throw new ServeError(
      'bad-request',
      `'${field.maxTokens}' is too large: ${requested}. This model's maximum context length is ${maxModelLen} tokens and your request has ${promptLength} input tokens (${requested} > ${maxModelLen} - ${promptLength}).`,
      field.maxTokens,
    );
  }
  return requested;
}
