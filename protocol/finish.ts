// Closing a trajectory: the statuses it may end with and which of them take a reason. One rule for
// POST /v1/trajectories/:id/finish, the store's finishTrajectory and the episode loop's sink; which
// transitions are legal (running → an end status; a repeated identical finish) is the store's.
import type { z } from 'zod';
import type { TrajectoryStatus } from './statuses.ts';

export const endStatuses = ['finished', 'truncated', 'error'] as const satisfies readonly TrajectoryStatus[];
export type EndStatus = (typeof endStatuses)[number];

/** `error` must say what failed; `truncated` may say why it was cut (`max-turns`); `finished` takes none. */
export function endReasonIssue(status: EndStatus, reason: string | undefined): string | undefined {
  if (status === 'error' && !reason) return 'required when status is "error"';
  if (status === 'finished' && reason) return 'only for status "error" or "truncated"';
  return undefined;
}

/** endReasonIssue as a zod refinement, reported at the field that holds the reason. */
export function refineEndReason<TReason extends string>(reasonField: TReason) {
  return (
    finish: { readonly status: EndStatus } & { readonly [K in TReason]?: string | undefined },
    ctx: z.RefinementCtx,
  ): void => {
    const message = endReasonIssue(finish.status, finish[reasonField]);
    if (message) ctx.addIssue({ code: 'custom', path: [reasonField], message });
  };
}
