// `edgerl demo` (what `npm run demo` runs): the whole loop on one machine, offline: rollouts at the
// edge, trajectories in the embedded Postgres, verifier (and RULER) rewards, GRPO on a LoRA adapter,
// published versions, and an A/B evaluation of the starting policy against the final one.
import { configFields } from '../../protocol/config-docs.ts';
import type { ProgressStream } from '../../trainer/train/progress.ts';
import { type CommandInput, defineCommand, UsageError } from '../command.ts';
import {
  type DemoConfig,
  DemoConfigError,
  type DemoConfigInput,
  demoConfigSchema,
  resolveDemoConfig,
} from '../demo/demo-config.ts';
import { createDemoProgress } from '../demo/demo-progress.ts';
import { DemoStopped, listenForStop } from '../demo/stop-signal.ts';
import { formatSummary } from '../demo/summary.ts';
import { configOptions, readConfigFlags } from '../flags/config-flags.ts';
import { usageOptions, usageVariables } from '../flags/config-usage.ts';

const demoFields = configFields(demoConfigSchema);

export const demoCommand = defineCommand({
  usage: `Usage: edgerl demo [--quick] [--fresh] [--json] [options]

Creates a tiny model, starts the local inference endpoint and the edge app, warm-starts the policy
on scripted demonstrations of the multi-hop lookup task, runs RL rounds (rollouts through the edge,
then a GRPO cycle that publishes a new adapter), and A/B-tests the starting policy against the final
one on held-out tasks. Prints a summary and writes an HTML report. Everything stays under --data-dir;
a second run reuses the model, warm start and finished rounds there (--fresh starts clean).
Ctrl-C stops after the current step; a second Ctrl-C exits at once. RULER joins the verifier's
reward when EDGERL_JUDGE_BASE_URL (and the other EDGERL_JUDGE_* variables) are set.

${usageOptions(demoFields)}

Environment:
${usageVariables(demoFields)}`,
  options: configOptions(demoFields),
  async run({ values, env, stdout, stderr }) {
    const config = demoConfigFromFlags(values, env);
    const { runDemo } = await import('../demo/run-demo.ts');
    // Bars on a terminal, plain lines in a log (the stream progress goes to: stderr, as --json keeps stdout for the summary).
    const progress = createDemoProgress(stderr as unknown as ProgressStream);
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
        return error.planned ? 0 : 130;
      }
      throw error;
    } finally {
      stop.dispose();
    }
  },
});

/** The flags through the demo's schema (the backend from EDGERL_BACKEND); bad values exit 2. */
function demoConfigFromFlags(values: CommandInput['values'], env: NodeJS.ProcessEnv): DemoConfig {
  // Untyped until the schema has checked it: resolveDemoConfig validates every field.
  const input = readConfigFlags(demoFields, values, env) as DemoConfigInput;
  try {
    return resolveDemoConfig({ ...input, ...(env.EDGERL_BACKEND ? { backend: env.EDGERL_BACKEND } : {}) });
  } catch (error) {
    if (error instanceof DemoConfigError) throw new UsageError(error.message);
    throw error;
  }
}
