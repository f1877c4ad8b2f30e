// `edgerl fleet catch-up --inference-url URL …`: loads onto every replica the published versions it
// lacks (a replica that restarted comes back with the base model only; one quarantined during a
// publication never got the version), and marks each `ready` once it lists it and answered a probe.
// The trainer runs the same catch-up at the start of every cycle; this is the way to do it at once.
// Exit 1 when a replica could not be reached or a version still failed to load there.
import { redactSecrets } from '../../protocol/redact-secrets.ts';
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

${usageOptions(fleetFields)}
  --json                   print one JSON array, a report per replica (replica, unreachable, loaded,
                           confirmed, failed); the retention lines go to stderr`,
  options: { ...configOptions(fleetFields), json: { type: 'boolean' } },
  async run({ values, env, stdout, stderr }) {
    const { describeRetention } = await import('../../trainer/train/retain-adapters.ts');
    const { catchUpFleet, describeCatchUp } = await import('../../trainer/train/catch-up-fleet.ts');
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
          for (const line of describeRetention(report)) (values.json ? stderr : stdout).write(`${line}\n`);
        },
        ...(flags.policy ? { policyName: flags.policy } : {}),
      }),
    );
    const bad = reports.filter((report) => report.unreachable || report.failed.length > 0).length;
    if (values.json) {
      // A replica URL may carry credentials (basic auth): masked, as the text masks them.
      const shown = reports.map((report) => ({ ...report, replica: redactSecrets(report.replica) }));
      stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
      return bad > 0 ? 1 : 0;
    }
    const lines = describeCatchUp(reports);
    for (const line of lines) stdout.write(`${line}\n`);
    stdout.write(
      bad > 0
        ? `${bad} of ${reports.length} replica(s) are not caught up\n`
        : `${reports.length} replica(s) serve every published version${lines.length > 0 ? ' now' : ' already'}\n`,
    );
    return bad > 0 ? 1 : 0;
  },
});
