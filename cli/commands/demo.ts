// `edgerl demo` (what `npm run demo` runs): the whole loop on one machine, offline: rollouts at the
// edge, trajectories in the embedded Postgres, verifier (and RULER) rewards, GRPO on a LoRA adapter,
// published versions, and an A/B evaluation of the starting policy against the final one.
import { createProgress, type ProgressStream } from '../../trainer/train/progress.ts';
import { defineCommand, intFlag, stringFlag, UsageError } from '../command.ts';
import {
  type DemoConfig,
  DemoConfigError,
  demoDefaults,
  quickOverrides,
  resolveDemoConfig,
} from '../demo/demo-config.ts';
import { runDemo } from '../demo/run-demo.ts';
import { DemoStopped, listenForStop } from '../demo/stop-signal.ts';
import { formatSummary } from '../demo/summary.ts';
import { isModelPreset } from '../../model/init-model.ts';

const d = demoDefaults;

export const demoCommand = defineCommand({
  usage: `Usage: edgerl demo [--quick] [--fresh] [--json] [options]

Creates a tiny model, starts the local inference endpoint and the edge app, warm-starts the policy
on scripted demonstrations of the multi-hop lookup task, runs RL rounds (rollouts through the edge,
then a GRPO cycle that publishes a new adapter), and A/B-tests the starting policy against the final
one on held-out tasks. Prints a summary and writes an HTML report. Everything stays under --data-dir;
a second run reuses the model, warm start and finished rounds there (--fresh starts clean).
Ctrl-C stops after the current step; a second Ctrl-C exits at once. RULER joins the verifier's
reward when JUDGE_BASE_URL (and the other JUDGE_* variables) are set.

Options:
  --quick                the test-sized run (every phase once, tiny sizes)
  --fresh                delete --data-dir first
  --json                 print the summary as JSON on stdout (progress goes to stderr)
  --data-dir DIR         where everything goes (default ${d.dataDir})
  --seed N               seed of weights, tasks and sampling (default ${d.seed})
  --preset NAME          tiny | small (default ${d.preset})
  --embedding-std X      std of the random model's token embedding (default ${d.embeddingStd})
  --lora-rank N          LoRA rank on every projection, alpha = 2·rank (default ${d.loraRank})
  --lora-init-a NAME     orthogonal | kaiming-uniform (default ${d.loraInitA})
  --lora-train-a         train LoRA's A too (default: A frozen, B alone trains)
  --sft-demos N          scripted demonstrations for the warm start (default ${d.sftDemonstrations})
  --give-up-rate X       how often a demonstration quits at once (answers ?) (default ${d.demonstrationGiveUpRate})
  --sft-epochs N         passes over them (default ${d.sftEpochs})
  --sft-batch N          sequences per SFT step (default ${d.sftBatch})
  --sft-lr X             SFT learning rate (default ${d.sftLearningRate})
  --rounds N             RL rounds (default ${d.rounds}; --quick ${quickOverrides.rounds})
  --groups N             groups per round (default ${d.groupsPerRound}; --quick ${quickOverrides.groupsPerRound})
  --group-size N         episodes per group (default ${d.groupSize}; --quick ${quickOverrides.groupSize})
  --lr X                 GRPO learning rate (default ${d.rlLearningRate})
  --eval-per-arm N       held-out episodes per A/B arm (default ${d.evalPerArm}; --quick ${quickOverrides.evalPerArm})
  --temperature T        sampling temperature (default ${d.temperature})
  --max-tokens N         completion tokens per turn (default ${d.maxTokensPerTurn})
  --concurrency N        episodes at once (default ${d.concurrency})
  --inference-port N     (default 0: a free port)
  --edge-port N          (default 0: a free port)`,
  options: {
    quick: { type: 'boolean' },
    fresh: { type: 'boolean' },
    json: { type: 'boolean' },
    'data-dir': { type: 'string' },
    seed: { type: 'string' },
    preset: { type: 'string' },
    'embedding-std': { type: 'string' },
    'lora-rank': { type: 'string' },
    'lora-init-a': { type: 'string' },
    'lora-train-a': { type: 'boolean' },
    'sft-demos': { type: 'string' },
    'give-up-rate': { type: 'string' },
    'sft-epochs': { type: 'string' },
    'sft-batch': { type: 'string' },
    'sft-lr': { type: 'string' },
    rounds: { type: 'string' },
    groups: { type: 'string' },
    'group-size': { type: 'string' },
    lr: { type: 'string' },
    'eval-per-arm': { type: 'string' },
    temperature: { type: 'string' },
    'max-tokens': { type: 'string' },
    concurrency: { type: 'string' },
    'inference-port': { type: 'string' },
    'edge-port': { type: 'string' },
  },
  async run({ values, env, stdout, stderr }) {
    const config = { ...parseConfig(values), ...(env.EDGERL_BACKEND ? { backend: env.EDGERL_BACKEND } : {}) };
    const progress = createProgress(stderr as unknown as ProgressStream);
    const stop = listenForStop(() =>
      stderr.write('\nstopping after the current step (Ctrl-C again to exit at once)…\n'),
    );
    try {
      const summary = await runDemo(config, { progress, stop, env });
      stdout.write(config.json ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
      return 0;
    } catch (error) {
      if (error instanceof DemoStopped) {
        stderr.write(`${error.message}\n`);
        return 130;
      }
      throw error;
    } finally {
      stop.dispose();
    }
  },
});

function parseConfig(values: Parameters<typeof stringFlag>[0]): DemoConfig {
  const int = (key: string) => (values[key] === undefined ? undefined : intFlag(values, key, 0));
  const num = (key: string) => {
    const raw = stringFlag(values, key);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value))
      throw new UsageError(`--${key} must be a number, got "${raw}"`);
    return value;
  };
  const preset = stringFlag(values, 'preset');
  if (preset !== undefined && !isModelPreset(preset))
    throw new UsageError(`--preset must be tiny or small, got "${preset}"`);
  const input: { -readonly [K in keyof DemoConfig]?: DemoConfig[K] | undefined } = {
    quick: values.quick === true,
    fresh: values.fresh === true,
    json: values.json === true,
    dataDir: stringFlag(values, 'data-dir'),
    seed: int('seed'),
    preset,
    embeddingStd: num('embedding-std'),
    loraRank: int('lora-rank'),
    loraInitA: stringFlag(values, 'lora-init-a') as DemoConfig['loraInitA'] | undefined,
    loraTrainA: values['lora-train-a'] === true ? true : undefined,
    sftDemonstrations: int('sft-demos'),
    demonstrationGiveUpRate: num('give-up-rate'),
    sftEpochs: int('sft-epochs'),
    sftBatch: int('sft-batch'),
    sftLearningRate: num('sft-lr'),
    rounds: int('rounds'),
    groupsPerRound: int('groups'),
    groupSize: int('group-size'),
    rlLearningRate: num('lr'),
    evalPerArm: int('eval-per-arm'),
    temperature: num('temperature'),
    maxTokensPerTurn: int('max-tokens'),
    concurrency: int('concurrency'),
    inferencePort: int('inference-port'),
    edgePort: int('edge-port'),
  };
  try {
    return resolveDemoConfig(input as Partial<DemoConfig>);
  } catch (error) {
    if (error instanceof DemoConfigError) throw new UsageError(error.message);
    throw error;
  }
}
