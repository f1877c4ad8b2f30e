// What the `edgerl fleet` commands share: their flags as one small config schema (the replicas, as
// the trainer's repeatable --inference-url; the policy; the store), and opening the store for one
// command. Catching up is trainer/train/catch-up-fleet.ts; the rows are the store's.
import { z } from 'zod';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import type { Store } from '../../db/store.ts';
import { configFields, documented, parseConfig } from '../../protocol/config-docs.ts';
import { intBetween } from '../../protocol/config-fields.ts';
import { fleetCheckFields, replicaUrls } from '../../trainer/train/inference-endpoint.ts';
import { type CommandInput, UsageError } from '../command.ts';
import { readConfigFlags } from '../flags/config-flags.ts';
import { storeFlagFields } from '../flags/store-flags.ts';

export const fleetFlagsSchema = z.strictObject({
  replicas: documented(
    replicaUrls(
      '(or EDGERL_INFERENCE_URL) is required: every replica of the fleet, as the trainer publishes to them',
    ).optional(),
    {
      doc: 'a replica of the fleet, its OpenAI base URL ending in /v1 (as the trainer and EDGERL_INFERENCE_REPLICAS name it)',
      flag: 'inference-url',
      arg: 'URL',
      repeatable: true,
      env: 'EDGERL_INFERENCE_URL',
    },
  ),
  apiKey: documented(z.string().optional(), {
    doc: 'sent to the replicas as Authorization: Bearer …',
    flag: 'inference-api-key',
    arg: 'KEY',
    env: 'EDGERL_INFERENCE_API_KEY',
  }),
  timeoutMs: documented(intBetween(1, 3_600_000).default(60_000), {
    doc: 'per request to a replica, ms',
    source: "the trainer's: loading a large adapter from disk can take tens of seconds",
    flag: 'timeout-ms',
    arg: 'MS',
  }),
  policy: documented(z.string().min(1).optional(), {
    doc: "only this policy's versions",
    shownDefault: 'every policy',
    flag: 'policy',
    arg: 'NAME',
    env: 'EDGERL_POLICY',
  }),
  ...fleetCheckFields(),
  ...storeFlagFields(),
});

export const fleetFields = configFields(fleetFlagsSchema);
export type FleetFlags = z.output<typeof fleetFlagsSchema>;

export function fleetFlags(input: Pick<CommandInput, 'values' | 'env'>): FleetFlags {
  return parseConfig(
    fleetFlagsSchema,
    readConfigFlags(fleetFields, input.values, input.env),
    (issues) => new UsageError(issues.join('; ')),
  );
}

export async function withFleetStore<T>(
  flags: FleetFlags,
  env: NodeJS.ProcessEnv,
  work: (store: Store) => Promise<T>,
): Promise<T> {
  const { openStore } = await import('../../db/drivers/open-store.ts');
  const config = storeConfigFromEnv(env, { url: flags.databaseUrl, dataDir: flags.dataDir });
  const store = await openStore({ url: config.url, dataDir: config.dataDir });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
