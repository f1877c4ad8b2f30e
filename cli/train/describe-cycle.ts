// One line on stdout per training cycle, saying what it did (or why it published nothing).
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
