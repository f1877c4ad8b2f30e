// The inference server the trainer publishes adapters to (OpenAI-compatible, vLLM `--enable-lora` or
// `edgerl serve-model`), as the zod slice of the train config. Talking to it is publish.ts.
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';
import { intBetween } from '../../protocol/config-fields.ts';

const section = 'Where';
const required =
  '(or EDGERL_INFERENCE_URL) is required: the OpenAI-compatible endpoint that serves the adapters, e.g. http://127.0.0.1:8000/v1';

const baseUrl = z
  .string({ error: required })
  .transform((url) => url.replace(/\/+$/, ''))
  .superRefine((url, context) => {
    const fail = (message: string) => context.addIssue({ code: 'custom', message });
    if (url === '') return fail(required);
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      // reported below
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) {
      return fail(`must be an http(s) URL such as http://127.0.0.1:8000/v1, got "${url}"`);
    }
    if (!parsed.pathname.endsWith('/v1')) {
      fail(`must end in /v1 (the OpenAI base URL), got "${url}"; try "${url}/v1"`);
    }
  });

export const inferenceEndpointSchema = z
  .strictObject({
    baseUrl: documented(baseUrl, {
      doc: 'OpenAI-compatible base URL ending in /v1',
      flag: 'inference-url',
      arg: 'URL',
      env: 'EDGERL_INFERENCE_URL',
      section,
    }),
    apiKey: documented(z.string().optional(), {
      doc: 'sent as Authorization: Bearer … when set',
      flag: 'inference-api-key',
      arg: 'KEY',
      env: 'EDGERL_INFERENCE_API_KEY',
      section,
    }),
    timeoutMs: documented(intBetween(1, 3_600_000).default(60_000), {
      doc: 'per request, ms',
      source: 'loading a large adapter from disk can take tens of seconds',
    }),
  })
  // Absent, it is parsed as {} so the missing URL is reported as such (the cast: baseUrl is required).
  .prefault({} as { baseUrl: string });

export type InferenceEndpoint = z.output<typeof inferenceEndpointSchema>;
