// The numbers that sum a trajectory up, shared by the group's columns and the trajectory page:
// rewards (verifier, judge, final), the advantage, turns, latency, tokens, and the drift the trainer
// noted when it rendered the trajectory for training.
import type { Trajectory } from '../../db/schema/trajectories.ts';
import { count, duration, fixed } from '../format.ts';
import { type Html, html } from '../html.ts';

/** What the trainer noted in `metadata.training` (trainer/train/prepare-step.ts, trajectoryNotes). */
export function driftOf(
  trajectory: Trajectory,
): { readonly turns: number; readonly tokens: number } | undefined {
  const training = trajectory.metadata.training as
    | { driftTurns?: unknown; driftTokens?: unknown }
    | undefined;
  const turns = typeof training?.driftTurns === 'number' ? training.driftTurns : 0;
  const tokens = typeof training?.driftTokens === 'number' ? training.driftTokens : 0;
  return turns > 0 ? { turns, tokens } : undefined;
}

export function driftBadge(trajectory: Trajectory): Html {
  const drift = driftOf(trajectory);
  return drift
    ? html`<span class="badge drift" title="re-tokenizing the text of ${drift.turns} sampled turn(s) gave other ids than were sampled (${drift.tokens} token(s) differ); training used the sampled ids">drift ${drift.turns} turn(s)</span>`
    : html``;
}

export function trajectoryFacts(trajectory: Trajectory, advantage: number | undefined): Html {
  return html`<dl class="facts">
<dt>verifier</dt><dd class="reward-verifier">${fixed(trajectory.verifierReward, 3)}</dd>
<dt>judge</dt><dd class="reward-judge">${fixed(trajectory.judgeScore, 3)}</dd>
<dt>final</dt><dd class="reward-final">${fixed(trajectory.finalReward, 3)}</dd>
<dt>advantage</dt><dd class="advantage">${advantage === undefined ? '–' : fixed(advantage, 3)}</dd>
<dt>turns</dt><dd class="turn-count">${trajectory.turnCount}</dd>
<dt>latency</dt><dd>${duration(trajectory.latencyMs)}</dd>
<dt>tokens</dt><dd>${count(trajectory.promptTokenCount)} prompt · ${count(trajectory.completionTokenCount)} completion</dd>
${trajectory.errorReason ? html`<dt>reason</dt><dd>${trajectory.errorReason}</dd>` : ''}
</dl>`;
}
