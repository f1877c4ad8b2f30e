// Puts a trained adapter in front of one OpenAI-compatible inference server, and proves it serves:
// copy the PEFT directory into the serving directory (temporary name, then rename), `POST
// /v1/load_lora_adapter` (vLLM's runtime LoRA API, needs VLLM_ALLOW_RUNTIME_LORA_UPDATING=True),
// `GET /v1/models` must list it, and one probe chat completion through it must answer. The stages
// are exported one by one for a fleet (publish-fleet.ts runs copy once, then load and verify on each
// replica). Each stage's failure comes back as data naming the stage and why; nothing here touches
// the store. Safe to repeat: a copy already in place or an adapter already listed is reused. Leaves
// out object-store uploads.
import { existsSync } from 'node:fs';
import { cp, mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { assertNever } from '../../protocol/statuses.ts';
import { redactSecrets } from '../../protocol/redact-secrets.ts';
import { type AdapterProbe, probeTokens } from './adapter-probe.ts';
import type { InferenceEndpoint } from './inference-endpoint.ts';
import { judgeProbe } from './verify-adapter.ts';
import { errorMessage } from '../../protocol/error-message.ts';

export const publishStages = ['copy', 'load', 'list', 'probe'] as const;
export type PublishStage = (typeof publishStages)[number];

export type PublishOutcome =
  | { readonly ok: true; readonly adapterPath: string; readonly reused: { copy: boolean; load: boolean } }
  | StageFailure;

export interface PublishInput {
  /** The checkpoint directory holding adapter_config.json and adapter_model.safetensors. */
  readonly sourceDir: string;
  /** The serving directory on this machine. */
  readonly servingDir: string;
  /** The same directory as the inference server sees it (a shared mount); default: `servingDir`, absolute. */
  readonly serverDir?: string;
  /** The name requests will use: `<policy>@<version>`. */
  readonly adapterName: string;
  readonly endpoint: InferenceEndpoint;
  readonly fetch?: typeof fetch;
}

export async function publishAdapter(input: PublishInput): Promise<PublishOutcome> {
  const copied = await copyToServingDir(input);
  if (!copied.ok) return copied;
  const replica: ReplicaCall = { endpoint: input.endpoint, ...(input.fetch ? { fetch: input.fetch } : {}) };
  const loaded = await loadOnReplica(replica, input.adapterName, copied.serverPath);
  if (!loaded.ok) return loaded;
  const verified = await verifyOnReplica(replica, input.adapterName);
  if (!verified.ok) return verified;
  return { ok: true, adapterPath: copied.serverPath, reused: { copy: !copied.copied, load: loaded.reused } };
}

export type StageFailure = { readonly ok: false; readonly stage: PublishStage; readonly reason: string };
// Reasons end up in publications.last_error and log lines: no replica URL's password in them.
const fail = (stage: PublishStage, reason: string): StageFailure => ({
  ok: false,
  stage,
  reason: redactSecrets(reason),
});

/** The serving directory's copy of the adapter, once for every replica (they read the same mount). */
export async function copyToServingDir(
  input: Pick<PublishInput, 'sourceDir' | 'servingDir' | 'serverDir' | 'adapterName'>,
): Promise<{ ok: true; serverPath: string; copied: boolean } | StageFailure> {
  const localPath = join(input.servingDir, input.adapterName);
  const serverPath = join(input.serverDir ?? resolve(input.servingDir), input.adapterName);
  try {
    return { ok: true, serverPath, copied: await copyAdapter(input.sourceDir, localPath) };
  } catch (error) {
    return fail('copy', `cannot copy ${input.sourceDir} to ${localPath}: ${errorMessage(error)}`);
  }
}

/** One replica and how to reach it. */
export interface ReplicaCall {
  readonly endpoint: InferenceEndpoint;
  readonly fetch?: typeof fetch;
}

/** The model ids the replica's `GET /models` lists (the base model and every loaded adapter). */
export async function replicaModels(
  replica: ReplicaCall,
): Promise<{ ok: true; ids: string[] } | { ok: false; reason: string }> {
  const response = await request(replica.fetch ?? fetch, replica.endpoint, '/models');
  if (!response.ok) return response;
  const data = (response.body as { data?: { id?: unknown }[] } | undefined)?.data;
  if (!Array.isArray(data)) return { ok: false, reason: 'GET /models answered without a "data" list' };
  return { ok: true, ids: data.map((entry) => String(entry.id)) };
}

/**
 * Prepare on one replica: `POST /load_lora_adapter` unless `GET /models` lists the name already
 * (a repeated publication, or a replica that kept it). `reused`: it was listed before.
 */
export async function loadOnReplica(
  replica: ReplicaCall,
  adapterName: string,
  serverPath: string,
): Promise<{ ok: true; reused: boolean } | StageFailure> {
  const before = await replicaModels(replica);
  if (!before.ok) return fail('list', before.reason);
  if (before.ids.includes(adapterName)) return { ok: true, reused: true };
  const loaded = await request(replica.fetch ?? fetch, replica.endpoint, '/load_lora_adapter', {
    method: 'POST',
    body: JSON.stringify({ lora_name: adapterName, lora_path: serverPath }),
  });
  if (!loaded.ok) return fail('load', loaded.reason);
  return { ok: true, reused: false };
}

/**
 * Unload from one replica (vLLM's `POST /unload_lora_adapter` {lora_name}, which serve-model speaks
 * too); a 404 means it was not loaded there, which is what was wanted.
 */
export async function unloadOnReplica(
  replica: ReplicaCall,
  adapterName: string,
): Promise<{ ok: true; wasLoaded: boolean } | { ok: false; reason: string }> {
  const answer = await request(replica.fetch ?? fetch, replica.endpoint, '/unload_lora_adapter', {
    method: 'POST',
    body: JSON.stringify({ lora_name: adapterName }),
  });
  if (answer.ok) return { ok: true, wasLoaded: true };
  if (/ answered 404:/.test(answer.reason)) return { ok: true, wasLoaded: false };
  return { ok: false, reason: redactSecrets(answer.reason) };
}

/** What verification compares a replica's answer with (verify-adapter.ts). */
export interface AnswerCheck {
  /** The trainer's logprobs of the probe sequence; absent for a version published without one. */
  readonly probe: AdapterProbe | undefined;
  /** The base model's name on the replicas (the policy's baseModel). */
  readonly baseModel: string;
  /** Largest mean |replica − trainer| logprob difference accepted, nats. */
  readonly tolerance: number;
  /** The vocabulary size, for the fixed probe sequence when no probe was recorded. */
  readonly vocabSize?: number;
}

/**
 * Verify on one replica: `GET /models` lists the name, and with `check` its answer is the adapter's:
 * the probe sequence's prompt_logprobs under the adapter's name and under the base model's, judged
 * by verify-adapter.ts. Without `check`: one probe chat completion must answer (a single endpoint
 * published by hand, publishAdapter).
 */
export async function verifyOnReplica(
  replica: ReplicaCall,
  adapterName: string,
  check?: AnswerCheck,
): Promise<{ ok: true; note?: string } | StageFailure> {
  const after = await replicaModels(replica);
  if (!after.ok) return fail('list', after.reason);
  if (!after.ids.includes(adapterName)) {
    return fail(
      'list',
      `GET /models does not list "${adapterName}" after loading it (it lists ${after.ids.join(', ') || 'nothing'})`,
    );
  }
  if (check) {
    const tokens = check.probe?.tokens ?? probeTokens(check.vocabSize ?? 2);
    const adapterAnswer = await promptScores(replica, adapterName, tokens);
    if (!adapterAnswer.ok) return fail('probe', adapterAnswer.reason);
    const replicaBase = await promptScores(replica, check.baseModel, tokens);
    // A replica may not serve the base under the policy's name (vLLM's default name is the model
    // path): then the trainer's own base answer stands in for it, which a replica serving the base
    // under the adapter's name matches as closely as its own would.
    const baseAnswer = replicaBase.ok
      ? replicaBase.logprobs
      : / answered 404:/.test(replicaBase.reason) && check.probe
        ? check.probe.base
        : undefined;
    if (!baseAnswer) {
      return fail('probe', `base model "${check.baseModel}": ${replicaBase.ok ? '' : replicaBase.reason}`);
    }
    const verdict = judgeProbe({
      adapterAnswer: adapterAnswer.logprobs,
      baseAnswer,
      probe: check.probe,
      tolerance: check.tolerance,
    });
    if (!verdict.ok) return fail('probe', verdict.reason);
    return {
      ok: true,
      note: replicaBase.ok
        ? verdict.note
        : `${verdict.note} (base judged by the trainer's answer: the replica does not serve "${check.baseModel}")`,
    };
  }
  const probe = await request(replica.fetch ?? fetch, replica.endpoint, '/chat/completions', {
    method: 'POST',
    body: JSON.stringify({
      model: adapterName,
      messages: [{ role: 'user', content: 'Reply with one word.' }],
      max_tokens: 1,
      temperature: 0,
    }),
  });
  if (!probe.ok) return fail('probe', probe.reason);
  const choices = (probe.body as { choices?: unknown[] } | undefined)?.choices;
  if (!Array.isArray(choices) || choices.length === 0) {
    return fail('probe', 'the probe completion came back without choices');
  }
  return { ok: true };
}

/**
 * The replica's log p(tokens[t] | tokens[< t]) for t ≥ 1 under `model`: vLLM's prompt_logprobs
 * extension of POST /completions (prompt as token ids, one token generated, `prompt_logprobs: 0`:
 * each position's map holds at least the prompt's own token, keyed by its id).
 */
export async function promptScores(
  replica: ReplicaCall,
  model: string,
  tokens: readonly number[],
): Promise<{ ok: true; logprobs: number[] } | { ok: false; reason: string }> {
  const answer = await request(replica.fetch ?? fetch, replica.endpoint, '/completions', {
    method: 'POST',
    body: JSON.stringify({ model, prompt: tokens, max_tokens: 1, temperature: 0, prompt_logprobs: 0 }),
  });
  if (!answer.ok) return answer;
  const choice = (answer.body as { choices?: { prompt_logprobs?: unknown }[] } | undefined)?.choices?.[0];
  const scored = choice?.prompt_logprobs;
  if (!Array.isArray(scored) || scored.length !== tokens.length) {
    return {
      ok: false,
      reason: `POST /completions with prompt_logprobs answered without ${tokens.length} prompt logprobs (a server without vLLM's prompt_logprobs?)`,
    };
  }
  const logprobs: number[] = [];
  for (let t = 1; t < tokens.length; t++) {
    const entry = (scored[t] as Record<string, { logprob?: unknown }> | null)?.[String(tokens[t])];
    if (typeof entry?.logprob !== 'number') {
      return { ok: false, reason: `prompt_logprobs has no logprob for token ${tokens[t]} at position ${t}` };
    }
    logprobs.push(entry.logprob);
  }
  return { ok: true, logprobs };
}

/** Copies unless the target already holds the adapter (a repeated publication); returns whether it copied. */
async function copyAdapter(sourceDir: string, target: string): Promise<boolean> {
  if (
    existsSync(join(target, 'adapter_config.json')) &&
    existsSync(join(target, 'adapter_model.safetensors'))
  ) {
    return false;
  }
  await mkdir(resolve(target, '..'), { recursive: true });
  const temporary = `${target}.tmp-${process.pid}`;
  await rm(temporary, { recursive: true, force: true });
  await mkdir(temporary, { recursive: true });
  for (const file of ['adapter_config.json', 'adapter_model.safetensors']) {
    await cp(join(sourceDir, file), join(temporary, file));
  }
  await rm(target, { recursive: true, force: true });
  await rename(temporary, target);
  return true;
}

type CallResult = { ok: true; body: unknown } | { ok: false; reason: string };

async function request(
  doFetch: typeof fetch,
  endpoint: InferenceEndpoint,
  path: string,
  init: RequestInit = {},
): Promise<CallResult> {
  const method = init.method ?? 'GET';
  const what = `${method} ${path}`;
  let response: Response;
  try {
    response = await doFetch(`${endpoint.baseUrl}${path}`, {
      ...init,
      method,
      headers: {
        ...(init.body ? { 'content-type': 'application/json' } : {}),
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      signal: AbortSignal.timeout(endpoint.timeoutMs),
    });
  } catch (error) {
    const reason =
      error instanceof Error && error.name === 'TimeoutError'
        ? `no answer within ${endpoint.timeoutMs} ms`
        : causeOf(error);
    return { ok: false, reason: redactSecrets(`${what} to ${endpoint.baseUrl} failed: ${reason}`) };
  }
  const text = await response.text().catch(() => '');
  if (!response.ok) {
    return { ok: false, reason: `${what} answered ${response.status}: ${errorText(text)}` };
  }
  const kind = responseKind(response.headers.get('content-type'));
  switch (kind) {
    case 'json':
      try {
        return { ok: true, body: JSON.parse(text) as unknown };
      } catch {
        return { ok: false, reason: `${what} answered malformed JSON: ${text.slice(0, 200)}` };
      }
    case 'text':
      return { ok: true, body: text };
    default:
      return assertNever(kind, 'response kind');
  }
}

function responseKind(contentType: string | null): 'json' | 'text' {
  return contentType?.includes('json') ? 'json' : 'text';
}

/** The server's own message when it sent an OpenAI-style error body, else the start of the text. */
function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === 'object' && typeof body.error?.message === 'string') return body.error.message;
    if (typeof body.error === 'string') return body.error;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 300) || '(empty body)';
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? errorMessage(error);
}
