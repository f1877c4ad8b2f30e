// A chat line's task, group and recorded times reach the episode under the store's names, and a
// refusal of them is named as the line names them.
import { describe, expect, it } from 'vitest';
import { chatLineSchema, chatLineToEpisode, lineField } from './chat-episode.ts';

describe('chatLineToEpisode', () => {
  it('carries task_id, group and the recorded times to the episode', () => {
    const line = chatLineSchema.parse({
      key: 'k1',
      task_id: '00000000-0000-4000-8000-000000000001',
      group: { key: 'g1', size: 4 },
      started_at: '2025-01-31T12:00:00Z',
      finished_at: '2025-01-31T12:01:00Z',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(chatLineToEpisode(line, { env: 'recorded' })).toEqual({
      key: 'k1',
      env: 'recorded',
      taskId: '00000000-0000-4000-8000-000000000001',
      group: { key: 'g1', size: 4 },
      startedAt: '2025-01-31T12:00:00Z',
      finishedAt: '2025-01-31T12:01:00Z',
      turns: [{ role: 'user', content: 'hi' }],
    });
    const plain = chatLineToEpisode(chatLineSchema.parse({ messages: [{ role: 'user', content: 'hi' }] }), {
      env: 'recorded',
    });
    expect(Object.keys(plain).sort()).toEqual(['env', 'key', 'turns']);
  });

  it('names the store fields as the line does', () => {
    expect(lineField(['episodes', 0, 'taskId'])).toBe('task_id');
    expect(lineField(['episodes', 0, 'finishedAt'])).toBe('finished_at');
    expect(lineField(['episodes', 0, 'group', 'size'])).toBe('group.size');
  });
});
