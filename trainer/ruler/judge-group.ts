// What RULER scores: one group of trajectories that attempted the same task, as OpenAI-style message
// lists, with the tools they had and an optional per-call rubric. Turning stored turns into this shape
// is the store adapter's job, not RULER's.
import { z } from 'zod';
import { chatMessageSchema, toolSpecSchema } from '../../protocol/chat.ts';

/** Groups larger than this are refused: a judge reading 256 trajectories at once ranks them poorly. */
export const MAX_GROUP_SIZE = 256;

export const judgeTrajectorySchema = z.object({
  /** The trajectory's id in the store; never shown to the judge (it sees a short label instead). */
  id: z.string().min(1),
  messages: z.array(chatMessageSchema).min(1),
});
export type JudgeTrajectory = z.infer<typeof judgeTrajectorySchema>;

export const judgeGroupSchema = z
  .object({
    /** The group's id in the store, used only for messages and by the sink. */
    groupId: z.string().min(1).optional(),
    trajectories: z.array(judgeTrajectorySchema).min(1).max(MAX_GROUP_SIZE),
    /** The tools the trajectories could call (the environment's tool list). */
    tools: z.array(toolSpecSchema).optional(),
    /** Overrides the environment's and the default rubric for this call. */
    rubric: z.string().trim().min(1).optional(),
  })
  .superRefine((group, ctx) => {
    const seen = new Set<string>();
    group.trajectories.forEach((trajectory, index) => {
      if (seen.has(trajectory.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['trajectories', index, 'id'],
          message: `duplicate trajectory id "${trajectory.id}"`,
        });
      }
      seen.add(trajectory.id);
    });
  });
export type JudgeGroup = z.infer<typeof judgeGroupSchema>;
