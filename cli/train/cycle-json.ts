// The JSON line `edgerl train --json` prints per cycle: the report's own fields under stable names
// (what was claimed, the version published, why nothing was), and for an idle `--once` the complete
// groups it saw but may not claim, by reason. One object per line, so `--every` and `--continuous`
// stream JSON lines that `jq` reads one by one. Step metrics are in the store (training_run_steps).
import type { UnclaimableGroups } from '../../db/store.ts';
import type { CycleReport } from '../../trainer/train/cycle-state.ts';

export function cycleJson(report: CycleReport, unclaimable?: UnclaimableGroups): string {
  return JSON.stringify(cycleObject(report, unclaimable));
}

function cycleObject(report: CycleReport, unclaimable: UnclaimableGroups | undefined): object {
  switch (report.kind) {
    case 'idle':
      return {
        kind: report.kind,
        stale: report.stale,
        setAside: report.setAside,
        ...(unclaimable ? { unclaimable } : {}),
      };
    case 'no-signal':
      return { kind: report.kind, groupIds: report.groupIds, stale: report.stale };
    case 'published':
      return {
        kind: report.kind,
        adapterName: report.adapterName,
        version: report.version,
        versionId: report.versionId,
        adapterUri: report.adapterUri,
        groupIds: report.groupIds,
        replicas: report.replicas,
        steps: report.steps,
        resumed: report.resumed,
        stale: report.stale ?? 0,
        ...(report.experimentId ? { experimentId: report.experimentId } : {}),
      };
    case 'publish-failed':
      return {
        kind: report.kind,
        adapterName: report.adapterName,
        stage: report.stage,
        reason: report.reason,
        steps: report.steps,
      };
    case 'discarded':
      return { kind: report.kind, reason: report.reason, steps: report.steps };
  }
}
