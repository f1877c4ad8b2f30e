// The newest judge score of each of some trajectories, with the judge's explanation: what the console
// shows beside a group's rewards (trajectories.judge_score holds the number only). Read-only.
import { desc, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { type JudgeScore, judgeScores } from '../schema/judge-scores.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const latestJudgeScoresSchema = z.object({ trajectoryIds: z.array(id).max(1000) });
export type LatestJudgeScoresInput = z.input<typeof latestJudgeScoresSchema>;

/** By trajectory id; trajectories never judged are absent. */
export async function latestJudgeScores(
  db: StoreDb,
  input: LatestJudgeScoresInput,
): Promise<Record<string, JudgeScore>> {
  const query = parseInput(latestJudgeScoresSchema, input, 'latestJudgeScores');
  if (query.trajectoryIds.length === 0) return {};
  const rows = await db
    .selectDistinctOn([judgeScores.trajectoryId])
    .from(judgeScores)
    .where(inArray(judgeScores.trajectoryId, query.trajectoryIds))
    .orderBy(judgeScores.trajectoryId, desc(judgeScores.createdAt), desc(judgeScores.id));
  return Object.fromEntries(rows.map((row) => [row.trajectoryId, row]));
}
