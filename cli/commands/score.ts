// `edgerl score --group ID`: scores one stored rollout group with RULER (one LLM-judge call ranks the
// whole group), records the scores and combined rewards, and prints each trajectory's score and
// explanation. The trainer goes through the same scoreAndRecordGroup.
import { readFileSync } from 'node:fs';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { type CommandInput, defineCommand, intFlag, stringFlag, UsageError } from '../command.ts';
import { errorMessage } from '../../protocol/error-message.ts';

export const scoreCommand = defineCommand({
  usage: `Usage: edgerl score --group ID [options]

Judges every finished trajectory of the group in one call to an OpenAI-compatible judge
(EDGERL_JUDGE_BASE_URL, EDGERL_JUDGE_MODEL, EDGERL_JUDGE_API_KEY), records scores and rewards, and
prints them.
Exit status 1 when the judge failed after its retries (the group is then marked unscored).

Options:
  --group ID            the rollout group to score (required)
  --database-url URL    postgres://… or memory:// (default: DATABASE_URL; unset: the embedded store in
                        EDGERL_DATA_DIR, default .edgerl/pgdata)
  --model NAME          judge model, overriding EDGERL_JUDGE_MODEL
  --orderings K         judge in K orders and average (default EDGERL_JUDGE_ORDERINGS or 1)
  --seed N              seed of the order shuffle (default EDGERL_JUDGE_SEED or 0)
  --rubric-file PATH    grade with this rubric instead of the default one
  --json                print the outcome as one JSON document: the group id, status, each
                        trajectory's score, reward and explanation, the judge's usage`,
  options: {
    group: { type: 'string' },
    'database-url': { type: 'string' },
    model: { type: 'string' },
    orderings: { type: 'string' },
    seed: { type: 'string' },
    'rubric-file': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, env, stdout, stderr }) {
    const { openStore } = await import('../../db/drivers/open-store.ts');
    const { scorableStatuses } = await import('../../db/store.ts');
    const { formatScoreReport } = await import('../../trainer/ruler/format-score-report.ts');
    const { createJudgeClient } = await import('../../trainer/ruler/judge-client.ts');
    const { loadJudgeGroup } = await import('../../trainer/ruler/load-judge-group.ts');
    const { rulerConfigFromEnv } = await import('../../trainer/ruler/ruler-config.ts');
    const { scoreAndRecordGroup } = await import('../../trainer/ruler/score-and-record.ts');
    const { storeJudgeScoreSink } = await import('../../trainer/ruler/store-sink.ts');
    const groupId = stringFlag(values, 'group');
    if (!groupId) throw new UsageError('--group ID is required');
    const config = rulerConfigFromEnv(env, {
      model: stringFlag(values, 'model'),
      orderings: optionalInt(values, 'orderings', 1, 16),
      seed: optionalInt(values, 'seed', 0, 0xffffffff),
      rubric: readRubric(stringFlag(values, 'rubric-file')),
    });
    const storeConfig = storeConfigFromEnv(env, { url: stringFlag(values, 'database-url') });
    const store = await openStore({ url: storeConfig.url, dataDir: storeConfig.dataDir });
    try {
      const loaded = await loadJudgeGroup(store, groupId);
      if (!scorableStatuses.includes(loaded.status)) {
        throw new Error(`group ${groupId} is ${loaded.status}; only complete groups can be scored`);
      }
      for (const skip of loaded.skipped) stderr.write(`skipped ${skip.trajectoryId} (${skip.status})\n`);
      if (loaded.group.trajectories.length === 0) {
        throw new Error(`group ${groupId} has no finished trajectory to score`);
      }
      if (loaded.toolsMissing > 0)
        stderr.write(
          `note: ${loaded.toolsMissing} trajectory(ies) have no stored tool list (recorded before edgerl stored tools); the judge sees the tools the others stored, if any\n`,
        );
      const outcome = await scoreAndRecordGroup(loaded.group, {
        config,
        client: createJudgeClient(config),
        sink: storeJudgeScoreSink(store),
      });
      stdout.write(
        values.json
          ? `${JSON.stringify({ groupId, ...outcome }, null, 2)}\n`
          : formatScoreReport(groupId, outcome),
      );
      return outcome.status === 'scored' ? 0 : 1;
    } finally {
      await store.close();
    }
  },
});

function optionalInt(
  values: CommandInput['values'],
  key: string,
  min: number,
  max: number,
): number | undefined {
  return values[key] === undefined ? undefined : intFlag(values, key, min, { min, max });
}

function readRubric(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--rubric-file: cannot read ${path}: ${errorMessage(error)}`);
  }
}
