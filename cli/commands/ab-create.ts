// `edgerl ab create NAME --arm VERSION=WEIGHT --arm …`: starts an A/B experiment between published
// versions of one policy. The first arm is the control. The sample size the report waits for is
// --min-samples, or sized from --baseline/--min-effect for a success metric, or 100 per arm.
import type { PublicationRow } from '../../db/store.ts';
import { defaultMinSamples, type ExperimentMetric, experimentMetrics } from '../../db/store-constants.ts';
import { sampleSizeForProportions } from '../../experiments/statistics.ts';
import { type CommandInput, defineCommand, stringFlag, UsageError } from '../command.ts';
import { onePositional, databaseUrlOption, databaseUrlUsage, withAbStore } from './ab-store.ts';
import { unservedArms } from './ab-unserved-arms.ts';

const usage = `Usage: edgerl ab create NAME --arm VERSION[=WEIGHT] --arm VERSION[=WEIGHT] [options]

Starts an A/B experiment between versions of one policy. Requests that name the experiment (the
edge's "experiment" field, or edgerl rollout --experiment NAME) are split between the arms by
weight, the same stickiness key always getting the same arm. The first --arm is the control that
edgerl ab report compares the others with. Arms cannot be changed later: start a new experiment.

Options:
  --arm VERSION=WEIGHT  an arm (two or more): a published version named by its served name (agent@3),
                        <policy>@latest, a policy name (its default version) or its id, and a positive
                        weight (default 1); weights are normalised to shares of traffic
  --metric M            reward (default): mean reward, Welch's t-test
                        success: share of rewards equal to 1, two-proportion z-test
  --min-samples N       rewarded trajectories each arm needs before the report gives a verdict
                        (default ${defaultMinSamples}, or sized from --baseline and --min-effect)
  --baseline P          with --metric success: the control's expected success rate, 0 < P < 1
  --min-effect D        with --baseline: the smallest change of success rate worth detecting (0.05 =
                        5 points); sizes --min-samples for a two-sided test at α = 0.05, power 0.8
  --description TEXT    what the experiment is about
  --json                print the experiment as JSON
${databaseUrlUsage}`;

export const abCreateCommand = defineCommand({
  usage,
  options: {
    arm: { type: 'string', multiple: true },
    metric: { type: 'string' },
    'min-samples': { type: 'string' },
    baseline: { type: 'string' },
    'min-effect': { type: 'string' },
    description: { type: 'string' },
    json: { type: 'boolean' },
    ...databaseUrlOption,
  },
  positionals: true,
  async run({ values, positionals, env, stdout, stderr }) {
    const name = onePositional(positionals, 'experiment name', 'edgerl ab create NAME --arm … --arm …');
    const armSpecs = (values.arm ?? []) as string[];
    if (armSpecs.length < 2) {
      throw new UsageError(`an experiment needs at least two --arm VERSION=WEIGHT, got ${armSpecs.length}`);
    }
    const arms = armSpecs.map(parseArmSpec);
    const metric = parseMetric(stringFlag(values, 'metric'));
    const sizing = resolveMinSamples(values, metric);
    const description = stringFlag(values, 'description');
    const { created, unserved } = await withAbStore({ values, env }, async (store) => {
      const versions = [];
      for (const arm of arms) versions.push(await store.resolveVersionRef(arm.version));
      const created = await store.createExperiment({
        name,
        metric,
        minSamples: sizing.minSamples,
        ...(description ? { description } : {}),
        arms: versions.map((version, index) => ({
          policyVersionId: version.id,
          weight: arms[index]?.weight ?? 1,
        })),
      });
      const rowsByPolicy = new Map<string, PublicationRow[]>();
      for (const policyId of new Set(versions.map((version) => version.policyId))) {
        rowsByPolicy.set(policyId, await store.listPublications({ policyId }));
      }
      return { created, unserved: unservedArms(versions, rowsByPolicy) };
    });
    for (const version of unserved) {
      stderr.write(
        `edgerl ab create: ${version.adapterName} is loaded on no replica (retention unloaded it); its episodes fail until \`edgerl fleet catch-up\` or the trainer's next cycle loads it\n`,
      );
    }
    if (values.json) {
      stdout.write(`${JSON.stringify(created, null, 2)}\n`);
      return 0;
    }
    const { experiment } = created;
    const width = Math.max(...created.arms.map((arm) => arm.name.length));
    stdout.write(
      [
        `created experiment ${experiment.name}: metric ${experiment.metric}, ${experiment.minSamples} rewarded trajectories per arm before a verdict (${sizing.why})`,
        ...created.arms.map(
          (arm, index) =>
            `  ${arm.name.padEnd(width)}  ${(arm.weight * 100).toFixed(1).padStart(5)}%${index === 0 ? '  control' : ''}`,
        ),
        `Route traffic with "experiment": "${experiment.name}" on edge requests or edgerl rollout --experiment ${experiment.name}; read results with edgerl ab report ${experiment.name}.`,
        '',
      ].join('\n'),
    );
    return 0;
  },
});

export interface ArmSpec {
  readonly version: string;
  readonly weight: number;
}

/** `agent@3=0.5` → version `agent@3`, weight 0.5; no `=` means weight 1. The last `=` splits. */
export function parseArmSpec(spec: string): ArmSpec {
  const split = spec.lastIndexOf('=');
  const version = (split < 0 ? spec : spec.slice(0, split)).trim();
  const weightText = split < 0 ? '1' : spec.slice(split + 1).trim();
  if (!version) throw new UsageError(`--arm "${spec}": name a version before "="`);
  const weight = Number(weightText);
  if (weightText === '' || !Number.isFinite(weight) || weight <= 0) {
    throw new UsageError(`--arm "${spec}": the weight must be a positive number, got "${weightText}"`);
  }
  return { version, weight };
}

function parseMetric(raw: string | undefined): ExperimentMetric {
  if (raw === undefined) return 'reward';
  const metric = experimentMetrics.find((candidate) => candidate === raw);
  if (!metric) throw new UsageError(`--metric must be one of ${experimentMetrics.join(', ')}, got "${raw}"`);
  return metric;
}

function unitFlag(values: CommandInput['values'], key: string, bounds: { min: number; max: number }) {
  const raw = stringFlag(values, key);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= bounds.min || value >= bounds.max) {
    throw new UsageError(
      `--${key} must be a number between ${bounds.min} and ${bounds.max} (exclusive), got "${raw}"`,
    );
  }
  return value;
}

/** The sample size per arm and where it came from (printed, so the choice is visible). */
export function resolveMinSamples(
  values: CommandInput['values'],
  metric: ExperimentMetric,
): { minSamples: number; why: string } {
  const baseline = unitFlag(values, 'baseline', { min: 0, max: 1 });
  const minEffect = unitFlag(values, 'min-effect', { min: -1, max: 1 });
  const explicit = stringFlag(values, 'min-samples');
  if (explicit !== undefined) {
    if (baseline !== undefined || minEffect !== undefined) {
      throw new UsageError('give either --min-samples or --baseline with --min-effect, not both');
    }
    const minSamples = Number(explicit);
    if (!Number.isInteger(minSamples) || minSamples < 2 || minSamples > 100_000_000) {
      throw new UsageError(`--min-samples must be an integer between 2 and 100000000, got "${explicit}"`);
    }
    return { minSamples, why: '--min-samples' };
  }
  if (baseline === undefined && minEffect === undefined) {
    return { minSamples: defaultMinSamples, why: 'the default' };
  }
  if (baseline === undefined || minEffect === undefined) {
    throw new UsageError('--baseline and --min-effect go together');
  }
  if (metric !== 'success') {
    throw new UsageError(
      '--baseline and --min-effect size a success-rate test: add --metric success, or give --min-samples',
    );
  }
  if (minEffect === 0 || baseline + minEffect <= 0 || baseline + minEffect >= 1) {
    throw new UsageError(
      `--baseline ${baseline} plus --min-effect ${minEffect} must be a rate strictly between 0 and 1, and differ from the baseline`,
    );
  }
  const minSamples = Math.max(2, sampleSizeForProportions(baseline, minEffect));
  return {
    minSamples,
    why: `sized to detect ${baseline} → ${Number((baseline + minEffect).toFixed(6))} at α = 0.05 with power 0.8`,
  };
}
