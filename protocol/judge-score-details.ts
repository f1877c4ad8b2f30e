// What a judge_scores row records beyond the score itself: where the score came from and how the
// reward was made of it. Written by the trainer (RULER), read by people in SQL; no judge logic here.
import { z } from 'zod';

export const judgeScoreDetailsSchema = z.object({
  /** The judging's cache key (judge, rubric, settings, tools, trajectories; trainer/ruler/group-hash.ts). */
  groupHash: z.string().min(1),
  /** The score each ordering of the group gave this trajectory; `score` is their mean. */
  orderingScores: z.array(z.number()),
  /** The environment's verifier reward, when it had one. */
  verifierReward: z.number().optional(),
  /** The weights that combined judge score and verifier reward into the final reward. */
  weights: z.object({ judge: z.number(), verifier: z.number() }),
  /** The reward GRPO trains on (trajectories.final_reward). */
  reward: z.number(),
  /** The scores repeat an earlier judging (from the cache), so the row carries no tokens or cost. */
  cached: z.boolean(),
  /** The judge gave the whole group one score: no signal for GRPO. */
  noSignal: z.boolean(),
  /** Retries, fallbacks and other notes of the group's judging. */
  notes: z.array(z.string().max(2_000)).max(100),
});
export type JudgeScoreDetails = z.infer<typeof judgeScoreDetailsSchema>;
