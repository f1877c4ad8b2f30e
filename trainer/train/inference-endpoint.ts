// The inference servers the trainer publishes adapters to (OpenAI-compatible, vLLM `--enable-lora` or
// `edgerl serve-model`), as the zod slice of the train config: one URL, or a fleet of replicas
// (repeated `--inference-url`, or a comma-separated EDGERL_INFERENCE_URL), each of which loads the
// adapter itself. Talking to one replica is publish.ts; to the fleet, publish-fleet.ts.
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';
import { intBetween, numberWhere } from '../../protocol/config-fields.ts';
import { parseReplicaList, replicaUrlProblem } from '../../protocol/replica-url.ts';

const section = 'Where';
const required =
  '(or EDGERL_INFERENCE_URL) is required: the OpenAI-compatible endpoint that serves the adapters, e.g. http://127.0.0.1:8000/v1';

/**
 * Replica URLs as given (repeated flags, or one comma-separated variable): a fresh schema per call,
 * since field docs are registered per schema (`edgerl fleet` documents its own).
 */
export function replicaUrls(missing = required) {
  return z
    .union([z.string(), z.array(z.string())], { error: missing })
    .transform((given) => parseReplicaList(given))
    .superRefine((list, context) => {
      if (list.length === 0) context.addIssue({ code: 'custom', message: missing });
      for (const url of list) {
        const problem = replicaUrlProblem(url);
        if (problem) context.addIssue({ code: 'custom', message: problem });
      }
    });
}

export const inferenceEndpointSchema = z
  .strictObject({
    baseUrl: documented(replicaUrls(), {
      doc: 'OpenAI-compatible base URL ending in /v1; give it once per replica of a fleet (each loads every adapter)',
      flag: 'inference-url',
      arg: 'URL',
      repeatable: true,
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
    minReplicas: documented(intBetween(1, 1000).default(1), {
      doc: 'replicas that must load and verify a new version before it is committed; the others are quarantined for it and caught up later',
      // The edge sends a version's requests only to replicas whose row is `ready`, so one replica
      // that holds it can serve it truthfully; waiting for all would let one dead replica stop every
      // publication (the failure mode of AIBrix #1675 turned around). Raise it when one replica
      // cannot carry the traffic alone.
      source: 'one: the edge routes a version only to the replicas that hold it',
      flag: 'min-replicas',
      arg: 'N',
      section,
    }),
    ...fleetCheckFields(),
  })
  .superRefine((endpoint, context) => {
    if (endpoint.minReplicas > endpoint.baseUrl.length && endpoint.baseUrl.length > 0) {
      context.addIssue({
        code: 'custom',
        path: ['minReplicas'],
        message: `must be at most the number of --inference-url replicas (${endpoint.baseUrl.length}), got ${endpoint.minReplicas}`,
      });
    }
  })
  .transform(({ baseUrl: replicas, ...rest }) => ({
    ...rest,
    /** The first replica: where single-endpoint calls go. */
    baseUrl: replicas[0] as string,
    /** Every replica, in the order given (one for a single endpoint). */
    replicas,
  }))
  // Absent, it is parsed as {} so the missing URL is reported as such (the cast: baseUrl is required).
  .prefault({} as { baseUrl: string });

/**
 * How replicas are held to account, shared by the trainer and `edgerl fleet catch-up`: the
 * verification tolerance (trainer/train/verify-adapter.ts) and how many versions stay loaded
 * (trainer/train/retain-adapters.ts). A fresh object per call: field docs are registered per schema.
 */
export function fleetCheckFields() {
  return {
    probeTolerance: documented(
      numberWhere((value) => Number.isFinite(value) && value > 0, 'a positive number').default(0.1),
      {
        doc: "largest mean |Δ log p| (nats) between a replica's probe logprobs and the trainer's before it is quarantined",
        // fp32 tfjs serve-model vs the fp32 trainer differ by ~1e-5; bf16 vLLM vs an fp32 trainer by a
        // few hundredths on average (the training–inference mismatch measured in Yao et al. 2025, "Your
        // Efficient RL Framework Secretly Brings You Off-Policy RL Training"); a different model or
        // adapter by far more. The base-model check (verify-adapter.ts) does not depend on it.
        source: 'above bf16 vLLM vs fp32 trainer (a few hundredths), far below another model',
        flag: 'probe-tolerance',
        arg: 'NATS',
        section,
      },
    ),
    keepVersions: documented(intBetween(1, 1000).default(3), {
      doc: "newest versions per policy each replica keeps loaded besides the defaults, their rollback targets and running experiments' arms; older ones are unloaded and their serving copies pruned",
      // Three covers the version being published, the one it replaced (an A/B control, a rollback) and
      // one more in flight on a slow edge cache; vLLM's --max-loras defaults to 1 and GPU memory per
      // adapter grows with rank, so keeping many loaded is not free.
      source: 'new + previous + one in flight; vLLM --max-loras is small',
      flag: 'keep-versions',
      arg: 'K',
      section,
    }),
  };
}

/** The checks' defaults, for callers without a config of their own (the demo). */
export const defaultFleetChecks = z.object(fleetCheckFields()).parse({});

/** The fleet's settings, as the trainer resolved them. */
export type InferenceFleet = z.output<typeof inferenceEndpointSchema>;

/** One replica's address and the settings every call to it uses. */
export interface InferenceEndpoint {
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly timeoutMs: number;
}
