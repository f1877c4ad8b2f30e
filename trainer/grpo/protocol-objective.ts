// An objective as the torch engine's protocol spells it (docs/torch-engine.md, op `step`: snake_case, a
// missing correction as null): what the engine client sends and what the loss vectors file records.
import type { Aggregation } from './aggregate.ts';
import type { ClipBounds, LossKind } from './losses.ts';
import type { Objective } from './objective-loss.ts';

/** The objective as the torch engine's protocol spells it (docs/torch-engine.md, op `step`). */
export type ProtocolObjective =
  | { readonly kind: 'sft' }
  | {
      readonly kind: 'grpo';
      readonly loss: {
        readonly loss_kind: LossKind;
        readonly clip: ClipBounds;
        readonly aggregation: Aggregation;
        readonly beta: number;
        readonly correction: { readonly kind: 'tis'; readonly cap: number } | null;
      };
    };

export function toProtocolObjective(objective: Objective): ProtocolObjective {
  if (objective.kind === 'sft') return { kind: 'sft' };
  const { lossKind, clip, aggregation, beta, correction } = objective.loss;
  return {
    kind: 'grpo',
    loss: { loss_kind: lossKind, clip, aggregation, beta, correction: correction ?? null },
  };
}
