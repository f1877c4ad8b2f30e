// `edgerl train`: the GRPO trainer job (claim → score → train LoRA → checkpoint → publish), once or on
// a schedule, or supervised warm-up with --sft. Reads argv and env into the TrainConfig (flags, usage
// and defaults all come from the config's schema) and hands it to the job (cli/train/).
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { configFields } from '../../protocol/config-docs.ts';
import {
  resolveTrainConfig,
  type TrainConfig,
  TrainConfigError,
  type TrainConfigInput,
  trainConfigSchema,
} from '../../trainer/train/train-config.ts';
import { type CommandInput, defineCommand, UsageError } from '../command.ts';
import { configOptions, readConfigFlags } from '../flags/config-flags.ts';
import { usageOptions } from '../flags/config-usage.ts';
import { parseDuration } from '../train/parse-duration.ts';
import { trainJobFields, trainJobSchema } from '../train/train-job-flags.ts';

const trainFields = configFields(trainConfigSchema);
const sections = [
  'Schedule',
  'Where',
  'Engine',
  'Rewards and advantages',
  'Loss and optimiser',
  'Off-policy data',
  'LoRA',
  'Leases and checkpoints',
  'Publication',
];

export const trainCommand = defineCommand({
  usage: `Usage: edgerl train --policy NAME --model DIR --inference-url URL [--once | --every 15m | --continuous] [options]

One cycle claims complete rollout groups under a lease, scores them (RULER and/or the verifier),
runs GRPO on the policy's LoRA adapter, writes a checkpoint (PEFT dir + optimizer state), publishes
it to the inference server (load_lora_adapter, /v1/models, a probe), and only then registers the
version as published and the groups as trained. A killed run resumes from its checkpoint. Safe to
run from cron. Exit status 1 when publication failed (the previous version keeps serving), 3 when
another trainer holds the policy's lease (one trainer advances a policy at a time).

${usageOptions([...trainFields, ...trainJobFields], sections)}`,
  options: { ...configOptions(trainJobFields), ...configOptions(trainFields) },
  async run({ values, env, stdout, stderr }) {
    const { pauseHook, pausePoint } = await import('../train/pause-hook.ts');
    const { runTrainJob } = await import('../train/run-train-job.ts');
    const { judgeFromEnv } = await import('../train/judge-from-env.ts');
    const flags = trainJobSchema.parse(readConfigFlags(trainJobFields, values, env));
    if (flags.once === true && flags.every !== undefined)
      throw new UsageError('choose one of --once and --every');
    const everyMs = flags.every === undefined ? undefined : parseDuration(flags.every);
    const config = trainConfigFromFlags(values, env);
    if (config.continuous && (flags.once === true || flags.every !== undefined))
      throw new UsageError('--continuous runs until stopped: drop --once and --every');
    const pauseAt = pausePoint(env.EDGERL_TRAIN_PAUSE_AT);
    return runTrainJob({
      config,
      everyMs,
      store: storeConfigFromEnv(env, { url: flags.databaseUrl, dataDir: flags.dataDir }),
      backend: flags.backend,
      judge: config.mode === 'rl' && config.reward !== 'verifier' ? judgeFromEnv(env) : undefined,
      hook: pauseAt ? pauseHook(pauseAt, stderr, env.EDGERL_TRAIN_PAUSE_UNTIL || undefined) : undefined,
      json: flags.json === true,
      stdout,
      stderr,
    });
  },
});

/** The flags (and their environment variables) through the config's schema; bad values exit 2. */
function trainConfigFromFlags(values: CommandInput['values'], env: NodeJS.ProcessEnv): TrainConfig {
  // Untyped until the schema has checked it: resolveTrainConfig validates every field.
  const input = readConfigFlags(trainFields, values, env) as TrainConfigInput;
  try {
    return resolveTrainConfig(input);
  } catch (error) {
    if (error instanceof TrainConfigError) throw new UsageError(error.message);
    throw error;
  }
}
