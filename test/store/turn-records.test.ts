// Stored turn records over time: the version-1 fixtures (test/fixtures/turns/v1.json, what edgerl
// wrote at c63f845) still parse, store and read back; the writers' metadata round-trips through the
// store and the reader; a row of a version this code does not read is refused by every reader.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnRow } from '../../db/schema/turns.ts';
import type { Store } from '../../db/store.ts';
import { turnToChatMessage } from '../../db/turn-to-chat-message.ts';
import { assistantTurn } from '../../edge/episode/assistant-turn.ts';
import { resumeFromTurns } from '../../edge/rollouts/turn-messages.ts';
import { type TurnInput, turnInputSchema } from '../../protocol/turn.ts';
import { readTurnMetadata } from '../../protocol/turn-metadata.ts';
import { TurnVersionError } from '../../protocol/turn-version.ts';
import { storedMessages } from '../../trainer/train/stored-messages.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

const fixtures = JSON.parse(readFileSync(new URL('../fixtures/turns/v1.json', import.meta.url), 'utf8')) as {
  records: Record<string, TurnInput & { schemaVersion: number }>;
};
const records = Object.entries(fixtures.records);

let testStore: TestStore;
let store: Store;
beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
});
afterAll(async () => {
  await testStore?.close();
});

/** Writes `turns` (indexes 0, 1, …) to a fresh trajectory and returns the stored rows. */
async function stored(turns: readonly Omit<TurnInput, 'trajectoryId' | 'index'>[]): Promise<TurnRow[]> {
  const trajectory = await store.startTrajectory({ env: 'turn-records' });
  for (const [index, turn] of turns.entries()) {
    await store.appendTurn({ ...turn, trajectoryId: trajectory.id, index });
  }
  return (await store.getTrajectory(trajectory.id)).turns;
}

function withoutPosition(record: TurnInput): Omit<TurnInput, 'trajectoryId' | 'index'> {
  const { trajectoryId: _trajectoryId, index: _index, ...rest } = record;
  return rest;
}

describe('version-1 turn records', () => {
  it('has fixtures of every writer at c63f845', () => {
    expect(records.map(([name]) => name).sort()).toEqual([
      'episode-assistant-token-exact',
      'episode-assistant-untokenized',
      'episode-tool-error',
      'episode-tool-ok',
      'proxy-client-assistant',
      'proxy-reply-streamed',
      'proxy-tool',
      'system',
    ]);
  });

  it.each(records)('%s parses as a turn record and its metadata reads back as written', (_name, record) => {
    expect(record.schemaVersion).toBe(1);
    const parsed = turnInputSchema.safeParse(record);
    expect(parsed.success).toBe(true);
    expect(readTurnMetadata(record)).toEqual(record.metadata ?? {});
  });

  it('stores and reads back through the store, the reader and the chat-message view', async () => {
    const toolCallId = 'call_2_1';
    const byName = fixtures.records;
    const sequence = [
      byName.system,
      { role: 'user', content: 'What is ab?' },
      byName['episode-assistant-token-exact'],
      byName['episode-tool-error'],
      byName['episode-assistant-untokenized'],
    ].map((record) => withoutPosition(record as TurnInput));
    const rows = await stored(sequence);
    expect(rows.map((row) => row.schemaVersion)).toEqual([1, 1, 1, 1, 1]);
    expect(rows.map((row) => readTurnMetadata(row))).toEqual(sequence.map((turn) => turn.metadata ?? {}));
    expect(rows[3]?.toolError).toBe('unknown-tool');
    expect(turnToChatMessage(rows[3] as TurnRow)).toEqual({
      role: 'tool',
      content: byName['episode-tool-error']?.content,
      tool_call_id: toolCallId,
    });
    expect(resumeFromTurns(rows).lastFinishReason).toBe('stop');
  });
});

describe('writer → store → reader', () => {
  it("round-trips the episode's and the proxy's assistant metadata", async () => {
    const response = {
      message: { role: 'assistant' as const, content: 'done' },
      finishReason: 'length' as const,
      completionTokenIds: [1, 2],
      completionLogprobs: [-0.5, -0.25],
      servedBy: 'agent@1',
      latencyMs: 3,
    };
    const context = {
      trajectoryId: '00000000-0000-4000-8000-000000000000',
      index: 0,
      sampling: { temperature: 0.5, maxTokens: 64 },
    };
    const episode = assistantTurn(response, response.message, {
      ...context,
      attempts: 3,
      recordedBy: 'episode',
    });
    const proxy = assistantTurn(response, response.message, { ...context, attempts: 1, recordedBy: 'proxy' });
    const rows = await stored([withoutPosition(episode), withoutPosition(proxy)]);
    expect(readTurnMetadata(rows[0] as TurnRow)).toEqual({
      finishReason: 'length',
      tokenExact: true,
      temperature: 0.5,
      maxTokens: 64,
      attempts: 3,
      recordedBy: 'episode',
    });
    expect(readTurnMetadata(rows[1] as TurnRow)).toMatchObject({ recordedBy: 'proxy', attempts: 1 });
    expect(resumeFromTurns(rows).lastFinishReason).toBe('length');
  });
});

describe('a record of a version this code does not read', () => {
  it('is refused by the chat-message view, the resume reader and the trainer', async () => {
    const rows = await stored([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello', metadata: { finishReason: 'stop' } },
    ]);
    const trajectoryId = rows[0]?.trajectoryId as string;
    // As a newer edgerl would have written it.
    await store.sql.query('update turns set schema_version = 2 where trajectory_id = $1', [trajectoryId]);
    const { trajectory, turns } = await store.getTrajectory(trajectoryId);
    expect(() => turnToChatMessage(turns[0] as TurnRow)).toThrow(TurnVersionError);
    expect(() => resumeFromTurns(turns)).toThrow(TurnVersionError);
    expect(() => storedMessages({ ...trajectory, turns })).toThrow(
      'turn record version 2 is not one this edgerl reads (1)',
    );
  });
});
