// `edgerl import FILE.jsonl`: recorded chats (OpenAI chat format, one episode per line) into the store
// as finished trajectories, streamed in batches (cli/import/import-jsonl.ts). Refused lines are listed
// with their line numbers and the rest imported; the exit status is 1 when any line was refused.
import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { z } from 'zod';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { maxIngestEpisodes } from '../../db/store-constants.ts';
import { configFields, documented, parseConfig } from '../../protocol/config-docs.ts';
import { intBetween } from '../../protocol/config-fields.ts';
import { defineCommand, UsageError } from '../command.ts';
import { configOptions, readConfigFlags } from '../flags/config-flags.ts';
import { usageOptions } from '../flags/config-usage.ts';
import { storeFlagFields } from '../flags/store-flags.ts';
import { defaultLimits } from '../../edge/edge-limits.ts';
import { readJsonlLines } from '../import/read-jsonl-lines.ts';

export const importSchema = z.strictObject({
  env: documented(z.string().trim().min(1).max(200).default('imported'), {
    doc: 'the environment the episodes are stored under',
    source: 'an edgerl choice',
    flag: 'env',
    arg: 'NAME',
  }),
  batch: documented(intBetween(1, maxIngestEpisodes).default(200), {
    doc: 'episodes per transaction',
    source: 'an edgerl choice: a few MB of JSON per statement',
    flag: 'batch',
    arg: 'N',
  }),
  policyVersion: documented(z.string().min(1).optional(), {
    doc: 'the policy version that produced the episodes: an id, `agent@3`, `agent@latest` or a policy name',
    flag: 'policy-version',
    arg: 'REF',
  }),
  ...storeFlagFields(),
});

const fields = configFields(importSchema);

export const importCommand = defineCommand({
  usage: `Usage: edgerl import FILE.jsonl [options]

Stores recorded episodes, one per line in the OpenAI chat format:
  {"messages": [...], "tools": [...]?, "metadata": {...}?, "reward": 0.5?, "key": "..."?}
An assistant message may carry "token_ids" and "logprobs" (one per id). Each episode is stored as a
finished trajectory under its "key", or a digest of the line: importing a line again is a no-op.
A line that is not an episode is refused with its line number; the others are still imported, and
the exit status is 1. So is a line that is not UTF-8, or longer than the edge's ingest body limit
(${defaultLimits.ingestBodyBytes} bytes). Turns follow the rules of docs/trajectory-format.md.
FILE - reads standard input.

${usageOptions(fields)}`,
  options: configOptions(fields),
  positionals: true,
  async run({ values, positionals, env, stdout, stderr }) {
    const { importJsonl } = await import('../import/import-jsonl.ts');
    const { openStore } = await import('../../db/drivers/open-store.ts');
    const [file, ...rest] = positionals;
    if (!file || rest.length > 0) throw new UsageError('give exactly one file: edgerl import FILE.jsonl');
    const flags = parseConfig(importSchema, readConfigFlags(fields, values, env), (issues) => {
      return new UsageError(issues.join('; '));
    });
    if (file !== '-')
      await access(file).catch(() => {
        throw new UsageError(`cannot read ${file}`);
      });
    const config = storeConfigFromEnv(env, { url: flags.databaseUrl, dataDir: flags.dataDir });
    const store = await openStore({ url: config.url, dataDir: config.dataDir });
    try {
      const version = flags.policyVersion ? await store.resolveVersionRef(flags.policyVersion) : undefined;
      // Bytes, not text: each line is decoded strictly and held to the edge's own ingest limit.
      const input = file === '-' ? process.stdin : createReadStream(file);
      const lines = readJsonlLines(input, defaultLimits.ingestBodyBytes);
      const report = await importJsonl(store, lines, {
        env: flags.env,
        batchSize: flags.batch,
        ...(version ? { policyVersionId: version.id } : {}),
        onRefused: (refused) =>
          stderr.write(`edgerl import: line ${refused.line}: ${refused.field}: ${refused.message}\n`),
      });
      stdout.write(
        `imported ${report.created} episodes (${report.turns} turns) from ${file}; ` +
          `${report.repeated} already stored; ${report.refused.length} lines refused\n`,
      );
      return report.refused.length > 0 ? 1 : 0;
    } finally {
      await store.close();
    }
  },
});
