// `edgerl fleet catch-up --inference-url URL …`: loads onto every replica the published versions it
// lacks (a replica that restarted comes back with the base model only; one quarantined during a
// publication never got the version), and marks each `ready` once it lists it and answered a probe.
// The trainer runs the same catch-up at the start of every cycle; this is the way to do it at once.
// Exit 1 when a replica could not be reached or a version still failed to load there.
import { catchUpFleet, describeCatchUp } from '../../trainer/train/catch-up-fleet.ts';
import { describeRetention } from '../../trainer/train/retain-adapters.ts';
import { defineCommand, UsageError } from '../command.ts';
import { configOptions } from '../flags/config-flags.ts';
import { usageOptions } from '../flags/config-usage.ts';
import { fleetFields, fleetFlags, withFleetStore } from './fleet-flags.ts';

export const fleetCatchUpCommand = defineCommand({
  usage: `Usage: edgerl fleet catch-up --inference-url URL [--inference-url URL …] [--policy NAME]

For each replica: GET /v1/models, then every published version it does not list is loaded
(POST /v1/load_lora_adapter from the version's adapter_uri), checked (listed, and its
prompt_logprobs for the trainer's probe sequence are the adapter's, not the base model's) and marked
ready in publications; one that fails is quarantined. First, versions nothing routes to (not a
default, rollback target, running experiment arm or among the newest --keep-versions) are unloaded
and their serving copies pruned. The edge routes a version only to the replicas marked ready.

${usageOptions(fleetFields)}`,
  options: configOptions(fleetFields),
  async run({ values, env, stdout }) {
    const flags = fleetFlags({ values, env });
    if (!flags.replicas) {
      throw new UsageError(
        '--inference-url (or EDGERL_INFERENCE_URL) is required: every replica of the fleet',
      );
    }
    const replicas = flags.replicas;
    const reports = await withFleetStore(flags, env, (store) =>
      catchUpFleet({
        store,
        fleet: {
          replicas,
          timeoutMs: flags.timeoutMs,
          probeTolerance: flags.probeTolerance,
          keepVersions: flags.keepVersions,
          ...(flags.apiKey ? { apiKey: flags.apiKey } : {}),
        },
        onRetention: (report) => {
          for (const line of describeRetention(report)) stdout.write(`${line}\n`);
        },
        ...(flags.policy ? { policyName: flags.policy } : {}),
      }),
    );
    const lines = describeCatchUp(reports);
    for (const line of lines) stdout.write(`${line}\n`);
    const bad = reports.filter((report) => report.unreachable || report.failed.length > 0).length;
    stdout.write(
      bad > 0
        ? `${bad} of ${reports.length} replica(s) are not caught up\n`
        : `${reports.length} replica(s) serve every published version${lines.length > 0 ? ' now' : ' already'}\n`,
    );
    return bad > 0 ? 1 : 0;
  },
});
