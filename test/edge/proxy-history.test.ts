// The recording proxy's history check by digest (edge/proxy/check-history.ts): the request's history,
// digested as the proxy digests it, equals the digest the store kept, for text the store escapes and
// for a trajectory whose turns came from an episode's appends; turns stored without a digest (before
// the column) are compared one by one instead, with the same answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestDigest } from '../../edge/proxy/check-history.ts';
import { toChatMessage } from '../../edge/proxy/proxy-request.ts';
import { type EdgeHarness, startEdgeHarness } from './support/edge-harness.ts';
import { TrajectoryKeys } from '../support/trajectory-keys.ts';

const keys = new TrajectoryKeys();

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base' });
});
afterAll(async () => {
  await h?.close();
});

async function startTrajectory(): Promise<string> {
  const response = await h.api('/v1/trajectories', { json: { env: 'my-agent' } });
  expect(response.status).toBe(201);
  return keys.remember(await response.json());
}

type Message = Record<string, unknown> & { role: string };

async function chat(trajectoryId: string, messages: readonly Message[]) {
  const response = await h.api('/v1/chat/completions', {
    json: { model: 'whatever', messages },
    headers: keys.header(trajectoryId),
  });
  const body = (await response.json()) as {
    choices?: { message: Message }[];
    error?: { field: string; message: string };
  };
  return { status: response.status, body, reply: body.choices?.[0]?.message };
}

/** What the proxy would compute for the history the trajectory holds now, and what the store keeps. */
async function digests(trajectoryId: string, messages: readonly Message[]) {
  const head = await h.store.getTrajectoryHead(trajectoryId);
  const parsed = messages.map((message) => toChatMessage(message as never));
  return { request: requestDigest(parsed, head.trajectory.turnCount), stored: head.historyDigest };
}

describe('the history check by digest', () => {
  it('matches a history the store had to escape, digested from the text as the client sent it', async () => {
    h.double.hostileText = true;
    try {
      const id = await startTrajectory();
      const opening: Message[] = [
        { role: 'system', content: 'Be brief \u0000.' },
        { role: 'user', content: 'lone \ud800 surrogate, a backslash \\u0000, the key "ab"' },
      ];
      const first = await chat(id, opening);
      expect(first.status).toBe(200);
      const history = [...opening, first.reply as Message];
      const { turns } = await h.store.getTrajectory(id);
      expect(turns.map((turn) => turn.textEncoding)).toContain('escaped');
      const { request, stored } = await digests(id, history);
      expect(stored).not.toBeNull();
      expect(request).toBe(stored);
      const toolCallId = (first.reply?.tool_calls as { id: string }[] | undefined)?.[0]?.id;
      const next: Message = toolCallId
        ? { role: 'tool', tool_call_id: toolCallId, content: 'value 4' }
        : { role: 'user', content: 'thanks' };
      const second = await chat(id, [...history, next]);
      expect(second.status).toBe(200);
      expect((await h.store.getTrajectory(id)).turns).toHaveLength(5);
    } finally {
      h.double.hostileText = false;
    }
  });

  it('continues a trajectory whose turns an episode appended', async () => {
    const id = await startTrajectory();
    // The episode loop's appends go through the same store statement (appendTurns), which keeps the
    // digest; here it writes as the trajectory's client, with its key, as only its writer may.
    await h.store.appendTurns(
      [
        { trajectoryId: id, index: 0, role: 'user', content: 'What is the key "ab"?' },
        { trajectoryId: id, index: 1, role: 'assistant', content: 'Let me look.' },
      ],
      keys.storeAccess(id),
    );
    const history: Message[] = [
      { role: 'user', content: 'What is the key "ab"?' },
      { role: 'assistant', content: 'Let me look.' },
    ];
    const { request, stored } = await digests(id, history);
    expect(request).toBe(stored);
    const call = await chat(id, [...history, { role: 'user', content: 'Go on.' }]);
    expect(call.status).toBe(200);
    expect((await h.store.getTrajectory(id)).turns).toHaveLength(4);
  });

  it('compares the turns themselves where they were stored without a digest, with the same answers', async () => {
    const id = await startTrajectory();
    const opening: Message[] = [
      { role: 'system', content: 'You follow keys.' },
      { role: 'user', content: 'Say hello.' },
    ];
    const first = await chat(id, opening);
    expect(first.status).toBe(200);
    // As turns stored before the history_digest column existed.
    await h.store.sql.query('update turns set history_digest = null where trajectory_id = $1', [id]);
    expect((await h.store.getTrajectoryHead(id)).historyDigest).toBeNull();

    const history = [...opening, first.reply as Message];
    const rewritten = await chat(id, [
      opening[0] as Message,
      { role: 'user', content: 'Say bye.' },
      first.reply as Message,
    ]);
    expect(rewritten.status).toBe(400);
    expect(rewritten.body.error?.field).toBe('messages.1');
    expect(rewritten.body.error?.message).toMatch(/differs from stored turn 1 \(content\)/);
    const short = await chat(id, opening);
    expect(short.status).toBe(400);
    expect(short.body.error?.field).toBe('messages');

    const second = await chat(id, [...history, { role: 'user', content: 'Again.' }]);
    expect(second.status).toBe(200);
    const { turns } = await h.store.getTrajectory(id);
    expect(turns).toHaveLength(5);
    // The chain stays unknown after a turn without a digest: later calls keep comparing turns.
    expect(turns.every((turn) => turn.historyDigest === null)).toBe(true);
  });
});
