// Importing a JSONL file of recorded chats into the store, streamed: lines are read one at a time,
// checked, and written in batches of whole episodes (ingestTrajectories, one transaction each). A line
// that is not an episode is refused with its line number and the rest still imported; a batch the store
// refuses is retried line by line, so a conflicting or unknown reference names its line too. Any
// other failure (the store unreachable) stops the import: the batches before it stay, and a rerun skips
// them (every episode has a key).
import { isStoreError } from '../../db/errors.ts';
import { type IngestEpisodeInput, ingestEpisodeSchema, type Store } from '../../db/store.ts';
import { findUnstorable, unstorableMessages, unstorablePath } from '../../protocol/unstorable-json.ts';
import { chatLineSchema, chatLineToEpisode, type ChatEpisodeOptions, lineField } from './chat-episode.ts';
import type { JsonlLine } from './read-jsonl-lines.ts';

export interface RefusedLine {
  /** 1-based, as editors count. */
  readonly line: number;
  /** The offending field in the line's own names (`messages.3.logprobs`), or `(line)`. */
  readonly field: string;
  readonly message: string;
}

export interface ImportReport {
  /** Lines that held an episode (blank lines are skipped). */
  readonly episodes: number;
  /** Episodes this import stored, and their turns. */
  readonly created: number;
  readonly turns: number;
  /** Episodes already stored under their key (an earlier run, or the same line twice). */
  readonly repeated: number;
  readonly refused: readonly RefusedLine[];
}

export interface ImportOptions extends ChatEpisodeOptions {
  readonly batchSize: number;
  /** Called with each refused line as it is found, and after each batch is stored. */
  readonly onRefused?: (refused: RefusedLine) => void;
}

interface Pending {
  readonly line: number;
  readonly episode: IngestEpisodeInput;
}

/** `lines` as readJsonlLines gives them: numbered, decoded, or refused already (too long, not UTF-8). */
export async function importJsonl(
  store: Store,
  lines: AsyncIterable<JsonlLine>,
  options: ImportOptions,
): Promise<ImportReport> {
  const totals = { episodes: 0, created: 0, turns: 0, repeated: 0 };
  const refused: RefusedLine[] = [];
  const refuse = (entry: RefusedLine) => {
    refused.push(entry);
    options.onRefused?.(entry);
  };
  let batch: Pending[] = [];
  const flush = async () => {
    const pending = batch;
    batch = [];
    if (pending.length === 0) return;
    for (const outcome of await storeBatch(store, pending)) {
      if ('refused' in outcome) refuse(outcome.refused);
      else {
        totals.created += outcome.created;
        totals.turns += outcome.turns;
        totals.repeated += outcome.repeated;
      }
    }
  };
  for await (const read of lines) {
    if ('problem' in read) {
      totals.episodes += 1;
      refuse({ line: read.line, field: '(line)', message: read.problem });
      continue;
    }
    const { line: number, text } = read;
    if (text.trim() === '') continue;
    totals.episodes += 1;
    const checked = episodeOfLine(text, number, options);
    if ('refused' in checked) {
      refuse(checked.refused);
      continue;
    }
    batch.push({ line: number, episode: checked.episode });
    if (batch.length >= options.batchSize) await flush();
  }
  await flush();
  return { ...totals, refused };
}

type LineResult = { episode: IngestEpisodeInput } | { refused: RefusedLine };

/** A line as an episode, or why not: JSON, the chat format, then the store's own episode rules. */
function episodeOfLine(text: string, line: number, options: ChatEpisodeOptions): LineResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { refused: { line, field: '(line)', message: 'not valid JSON' } };
  }
  const tooDeep = findUnstorable(json, { text: false });
  if (tooDeep) {
    const field = unstorablePath(tooDeep).join('.') || '(line)';
    return { refused: { line, field, message: unstorableMessages[tooDeep.problem] } };
  }
  const chat = chatLineSchema.safeParse(json);
  if (!chat.success) return { refused: issueOf(line, chat.error.issues, false) };
  const episode = chatLineToEpisode(chat.data, options);
  const checked = ingestEpisodeSchema.safeParse(episode);
  if (!checked.success) return { refused: issueOf(line, checked.error.issues, true) };
  return { episode };
}

function issueOf(
  line: number,
  issues: readonly { path: PropertyKey[]; message: string; code: string; keys?: string[] }[],
  storeNames: boolean,
): RefusedLine {
  const issue = issues[0];
  if (!issue) return { line, field: '(line)', message: 'invalid' };
  const unknownKey = issue.code === 'unrecognized_keys';
  const path = unknownKey ? [...issue.path, issue.keys?.[0] ?? ''] : issue.path;
  const field = storeNames ? lineField(path) : path.map(String).join('.') || '(line)';
  return { line, field, message: unknownKey ? 'unknown field' : issue.message };
}

type BatchOutcome = { created: number; turns: number; repeated: number } | { refused: RefusedLine };

/** One transaction for the batch; when the store refuses it, each line alone, to name the one at fault. */
async function storeBatch(store: Store, pending: readonly Pending[]): Promise<BatchOutcome[]> {
  try {
    return [await storeEpisodes(store, pending)];
  } catch (error) {
    if (!refusal(error) || pending.length === 1) return [refusedOutcome(error, pending)];
  }
  const outcomes: BatchOutcome[] = [];
  for (const one of pending) {
    try {
      outcomes.push(await storeEpisodes(store, [one]));
    } catch (error) {
      outcomes.push(refusedOutcome(error, [one]));
    }
  }
  return outcomes;
}

async function storeEpisodes(store: Store, pending: readonly Pending[]): Promise<BatchOutcome> {
  const result = await store.ingestTrajectories({ episodes: pending.map((item) => item.episode) });
  return {
    created: result.createdTrajectories,
    turns: result.createdTurns,
    repeated: result.trajectories.length - result.createdTrajectories,
  };
}

/** The store refusing what a line holds (as opposed to the store failing): reported, not fatal. */
function refusal(error: unknown): boolean {
  return (
    isStoreError(error, 'validation') || isStoreError(error, 'conflict') || isStoreError(error, 'not-found')
  );
}

function refusedOutcome(error: unknown, pending: readonly Pending[]): BatchOutcome {
  const [only] = pending;
  if (!refusal(error) || !only || pending.length !== 1) throw error;
  const issue = isStoreError(error) ? error.issues[0] : undefined;
  return {
    refused: {
      line: only.line,
      field: issue ? lineField(issue.path) : '(line)',
      message: issue?.message ?? (error as Error).message,
    },
  };
}
