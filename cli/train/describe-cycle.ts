// One line on stdout per training cycle, saying what it did (or why it published nothing), and when
// it found nothing to claim, which complete groups it saw that are not its own and why.
import type { UnclaimableGroups } from '../../db/store.ts';
import type { CycleReport } from '../../trainer/train/cycle-state.ts';

export function describeCycle(report: CycleReport): string {
  switch (report.kind) {
    case 'idle':
      return `edgerl train: no complete group to train on${staleNote(report.stale)}`;
    case 'no-signal':
      return `edgerl train: ${report.groupIds.length} group(s) without reward spread consumed; nothing published${staleNote(report.stale)}`;
    case 'published':
      return `edgerl train: published ${report.adapterName} (version ${report.version}, ${report.steps} step(s), ${report.groupIds.length} group(s))${report.resumed ? " from an earlier run's checkpoint" : ''}${staleNote(report.stale ?? 0)}`;
    case 'publish-failed':
      return `edgerl train: publication of ${report.adapterName} failed at ${report.stage}: ${report.reason}`;
    case 'discarded':
      return `edgerl train: checkpoint discarded: ${report.reason}`;
  }
}

/** `; 3 stale group(s) skipped` when any were (beyond --max-off-policy-steps). */
function staleNote(stale: number): string {
  return stale > 0 ? `; ${stale} stale group(s) skipped` : '';
}

/** One line per reason complete groups exist that `policy`'s trainer cannot claim; none when there are none. */
export function describeUnclaimable(groups: UnclaimableGroups, policy: string): string[] {
  const lines: string[] = [];
  if (groups.withoutPolicy > 0) {
    lines.push(
      `  ${groups.withoutPolicy} complete group(s) were rolled out without a policy (a model no policy version names): roll out with policy "${policy}" (POST /v1/rollouts {"policy": "${policy}"}, or the edge's --default-model ${policy}) to train on them`,
    );
  }
  if (groups.otherPolicy > 0) {
    lines.push(`  ${groups.otherPolicy} complete group(s) belong to other policies (edgerl policy list)`);
  }
  if (groups.heldOut > 0) {
    lines.push(
      `  ${groups.heldOut} complete group(s) are on validation or eval tasks, which are never trained on`,
    );
  }
  if (groups.leased > 0) {
    lines.push(`  ${groups.leased} complete group(s) are held by another trainer right now`);
  }
  return lines;
}
