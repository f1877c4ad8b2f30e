// serve-model's fault hooks, for fault scenarios only: EDGERL_SERVE_FAULT names one, read by the CLI
// (cli/commands/serve-model.ts) and handed to the engine. `base-under-adapter-name`: every adapter
// loads as asked (200, listed in /v1/models) but requests under its name decode with the base model,
// as a misconfigured vLLM would (LoRA off, a stale in-place reload: vLLM issue #42125); fleet
// verification must catch it (trainer/train/verify-adapter.ts). Never set outside tests.
export const serveFaults = ['base-under-adapter-name'] as const;
export type ServeFault = (typeof serveFaults)[number];

/** The env variable's value as a fault, undefined when unset; throws on an unknown name. */
export function parseServeFault(value: string | undefined): ServeFault | undefined {
  if (!value) return undefined;
  if (!(serveFaults as readonly string[]).includes(value)) {
    throw new Error(`EDGERL_SERVE_FAULT must be one of ${serveFaults.join(', ')}, got "${value}"`);
  }
  return value as ServeFault;
}
