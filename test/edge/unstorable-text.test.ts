// Text Postgres cannot hold (a NUL, lone surrogates) from the model or a proxy client is stored, not
// refused: an episode whose model answers with it ends `finished`, and its turns read back exactly
// through the API (trajectory, group and events routes) and the training render; the proxy records such
// an upstream reply and returns it unchanged. In SQL the row says `text_encoding = 'escaped'`.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { renderForTraining } from '../../model/tokenizer/render-for-training.ts';
import type { ToolSpec } from '../../protocol/chat.ts';
import { storedMessages } from '../../trainer/train/stored-messages.ts';
import { tinyTokenizer } from '../train/support/tiny-policy.ts';
import { type EdgeHarness, startEdgeHarness } from './support/edge-harness.ts';
import { hostileContent } from './support/inference-double.ts';
import { TrajectoryKeys } from '../support/trajectory-keys.ts';

const keys = new TrajectoryKeys();

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base' });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.double.hostileText = true;
  h.double.answered.length = 0;
});

interface ApiTurn {
  index: number;
  role: string;
  content: string | null;
  toolCalls: { id: string; function: { name: string; arguments: string } }[] | null;
  completionTokenIds: number[] | null;
  textEncoding: string;
}

async function json<T>(path: string, init?: RequestInit & { json?: unknown }): Promise<T> {
  const response = await h.api(path, init);
  const body = (await response.json()) as T;
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/** The turn rows as stored, read with plain SQL. */
async function sqlTurns(trajectoryId: string) {
  const result = await h.store.sql.query(
    'select text_encoding, content from turns where trajectory_id = $1 order by index',
    [trajectoryId],
  );
  return result.rows.map(([textEncoding, content]) => ({ text_encoding: textEncoding, content }));
}

/** The events route's `turn` events, parsed, until its `end` event. */
async function eventTurns(trajectoryId: string): Promise<ApiTurn[]> {
  const response = await h.api(`/v1/trajectories/${trajectoryId}/events`);
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.includes('event: turn'))
    .map(
      (block) =>
        JSON.parse(
          block
            .split('\n')
            .find((line) => line.startsWith('data: '))
            ?.slice(6) ?? '',
        ) as ApiTurn,
    );
}

describe('an episode whose model answers with NULs and lone surrogates', () => {
  it('ends finished, and every route and the training render give back the exact text', async () => {
    const started = await json<{ groupId: string; trajectoryIds: string[] }>('/v1/rollouts', {
      json: { env: 'multi-hop', groupSize: 2, taskSeed: 77 },
    });
    await h.edge.queue.idle();
    const { group, trajectories } = await json<{
      group: { status: string };
      trajectories: { id: string; status: string; errorReason: string | null; turns: ApiTurn[] }[];
    }>(`/v1/groups/${started.groupId}?turns=true`);
    expect(group.status).toBe('complete');
    expect(trajectories.map((trajectory) => [trajectory.status, trajectory.errorReason])).toEqual([
      ['finished', null],
      ['finished', null],
    ]);

    // What the model sent, in the order it was asked; each episode's assistant turns are a slice of it.
    const answered = h.double.answered.map((message) => ({
      content: message.content as string | null,
      toolCalls: (message.tool_calls as ApiTurn['toolCalls'] | undefined) ?? null,
    }));
    const hostile = answered.filter((answer) => answer.content === hostileContent('0'));
    const withArguments = answered.filter((answer) =>
      answer.toolCalls?.[0]?.function.arguments.includes('\u0000'),
    );
    expect(hostile.length).toBeGreaterThan(0);
    expect(withArguments.length).toBeGreaterThan(0);

    for (const trajectory of trajectories) {
      const assistant = trajectory.turns.filter((turn) => turn.role === 'assistant');
      expect(assistant.length).toBeGreaterThan(0);
      for (const turn of assistant) {
        expect(answered).toContainEqual({ content: turn.content, toolCalls: turn.toolCalls });
      }
      // The same through the trajectory route and the events stream.
      const one = await json<{ turns: ApiTurn[] }>(`/v1/trajectories/${trajectory.id}`);
      expect(one.turns).toEqual(trajectory.turns);
      expect(await eventTurns(trajectory.id)).toEqual(trajectory.turns);

      // In SQL, the rows with unstorable text are escaped, spelled with JSON's \u escapes.
      const rows = await sqlTurns(trajectory.id);
      const escapedRows = rows.filter((row) => row.text_encoding === 'escaped');
      expect(escapedRows.length).toBeGreaterThan(0);
      expect(rows.filter((row) => row.text_encoding === 'plain').length).toBeGreaterThan(0);
      expect(escapedRows.map((row) => row.content)).toContain('0\\u0000 \\\\u0000 \\\\\\\\ \\ud800|\\udc00');

      // The trainer's messages are the original text, and the render keeps the sampled ids.
      const stored = await h.store.getTrajectory(trajectory.id);
      const messages = storedMessages(stored);
      for (const [index, message] of messages.entries()) {
        const turn = trajectory.turns[index];
        expect(message.content).toBe(turn?.content ?? (message.role === 'assistant' ? null : ''));
      }
      const tokenizer = tinyTokenizer();
      const rendered = tokenizer.applyChatTemplate(messages);
      expect(rendered).toContain(hostileContent('0'));
      const training = renderForTraining(tokenizer, { messages });
      const sampledSpans = training.spans.filter((span) => span.sampled);
      expect(sampledSpans.length).toBe(assistant.length);
      for (const [position, span] of sampledSpans.entries()) {
        const ids = assistant[position]?.completionTokenIds ?? [];
        expect(training.ids.slice(span.start, span.start + ids.length)).toEqual(ids);
      }
    }
  });
});

describe('the recording proxy with text Postgres cannot hold', () => {
  async function startTrajectory(): Promise<string> {
    return keys.remember(await json<unknown>('/v1/trajectories', { json: { env: 'my-agent' } }));
  }

  const opening = [
    { role: 'system', content: 'You follow keys.\u0000' },
    { role: 'user', content: 'Say 0, then \uDFFF.' },
  ];

  it('records an upstream reply with a NUL and returns it to the client unchanged', async () => {
    const id = await startTrajectory();
    const response = await h.api('/v1/chat/completions', {
      json: { model: 'whatever', messages: opening },
      headers: keys.header(id),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    const sent = h.double.answered.at(-1)?.content;
    expect(sent).toContain('\u0000');
    expect(body.choices[0]?.message.content).toBe(sent);
    const { turns } = await json<{ turns: ApiTurn[] }>(`/v1/trajectories/${id}`);
    expect(turns.map((turn) => turn.content)).toEqual([opening[0]?.content, opening[1]?.content, sent]);
    // Asked again with the history it holds: the stored turns compare equal, so nothing conflicts.
    const next = await h.api('/v1/chat/completions', {
      json: {
        model: 'whatever',
        messages: [...opening, { role: 'assistant', content: sent }, { role: 'user', content: 'again' }],
      },
      headers: keys.header(id),
    });
    expect(next.status).toBe(200);
    expect((await h.store.getTrajectory(id)).turns).toHaveLength(5);
  });

  it('records a streamed reply with lone surrogates and passes each piece through', async () => {
    const id = await startTrajectory();
    const response = await h.api('/v1/chat/completions', {
      json: { model: 'whatever', messages: opening, stream: true },
      headers: keys.header(id),
    });
    expect(response.status).toBe(200);
    const pieces = (await response.text())
      .split('\n\n')
      .filter((block) => block.startsWith('data: {'))
      .map(
        (block) =>
          JSON.parse(block.slice(6)) as { choices?: { delta?: { content?: string } }[]; error?: unknown },
      );
    expect(pieces.filter((piece) => piece.error)).toEqual([]);
    const streamed = pieces.map((piece) => piece.choices?.[0]?.delta?.content ?? '').join('');
    const sent = h.double.answered.at(-1)?.content;
    expect(streamed).toBe(sent);
    expect((await h.store.getTrajectory(id)).turns.at(-1)?.content).toBe(sent);
  });

  it("stores a request's tool spec with a NUL in its description, read back as sent", async () => {
    const id = await startTrajectory();
    const tools: ToolSpec[] = [
      {
        type: 'function',
        function: { name: 'lookup', description: 'Look \\ up \u0000 \uD800.', parameters: {} },
      },
    ];
    const response = await h.api('/v1/chat/completions', {
      json: { model: 'whatever', messages: opening, tools },
      headers: keys.header(id),
    });
    expect(response.status).toBe(200);
    expect(
      (await json<{ trajectory: { tools: ToolSpec[] } }>(`/v1/trajectories/${id}`)).trajectory.tools,
    ).toEqual(tools);
    const [row] = (
      await h.store.sql.query('select text_encoding, tools::text from trajectories where id = $1', [id])
    ).rows;
    const [textEncoding, storedTools] = row ?? [];
    expect(textEncoding).toBe('escaped');
    expect(storedTools).toContain('Look \\\\\\\\ up \\\\u0000 \\\\ud800.');
  });
});

describe('the store', () => {
  async function trajectoryId(): Promise<string> {
    return (await h.store.startTrajectory({ env: 'my-agent' })).id;
  }

  it('keeps an ordinary row with backslashes verbatim in SQL', async () => {
    const id = await trajectoryId();
    await h.store.appendTurn({ trajectoryId: id, index: 0, role: 'user', content: 'C:\\temp \\u0000' });
    expect(await sqlTurns(id)).toMatchObject([{ text_encoding: 'plain', content: 'C:\\temp \\u0000' }]);
    expect((await h.store.getTrajectory(id)).turns[0]?.content).toBe('C:\\temp \\u0000');
  });

  it('treats a retried escaped turn as a repeat and a different one as a conflict', async () => {
    const id = await trajectoryId();
    const turn = {
      trajectoryId: id,
      index: 0,
      role: 'assistant' as const,
      content: 'a\u0000b',
      toolCalls: [
        { id: 'c\uD800', type: 'function' as const, function: { name: 'n\u0000', arguments: '{\u0000' } },
      ],
      metadata: { 'key\u0000': ['\uDC00'] },
    };
    expect(await h.store.appendTurn(turn)).toMatchObject({ created: true });
    expect(await h.store.appendTurn(turn)).toMatchObject({ created: false });
    await expect(h.store.appendTurn({ ...turn, content: 'a\u0000c' })).rejects.toMatchObject({
      code: 'conflict',
    });
    const [stored] = (await h.store.getTrajectory(id)).turns;
    expect(stored).toMatchObject({
      content: turn.content,
      toolCalls: turn.toolCalls,
      metadata: turn.metadata,
    });
  });

  it('still refuses such text where the store interprets it: a stickiness key, trajectory metadata', async () => {
    await expect(
      h.store.startTrajectory({ env: 'my-agent', stickinessKey: 'u\u0000' }),
    ).rejects.toMatchObject({
      code: 'validation',
      issues: [{ path: ['stickinessKey'] }],
    });
    await expect(
      h.store.startTrajectory({ env: 'my-agent', metadata: { a: '\uD800' } }),
    ).rejects.toMatchObject({
      code: 'validation',
      issues: [{ path: ['metadata', 'a'] }],
    });
  });

  it('stores an error reason with its NUL spelled out', async () => {
    const id = await trajectoryId();
    const { trajectory } = await h.store.finishTrajectory({
      trajectoryId: id,
      status: 'error',
      errorReason: 'verifier: bad answer "\u0000"',
    });
    expect(trajectory.errorReason).toBe('verifier: bad answer "\\u0000"');
  });
});
