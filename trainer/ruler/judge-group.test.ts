import { describe, expect, it } from 'vitest';
import { judgeGroupSchema } from './judge-group.ts';

describe('judgeGroupSchema', () => {
  it('keeps only the chat fields, so training messages (with sampled ids and logprobs) judge as plain chat', () => {
    const user = { role: 'user', content: 'Hi' } as const;
    const training = {
      role: 'assistant',
      content: 'Yo',
      completionTokenIds: [1, 2],
      completionLogprobs: [-1, -2],
    };
    const parsed = judgeGroupSchema.parse({
      groupId: 'g',
      trajectories: [
        { id: 'a', messages: [user, training] },
        { id: 'b', messages: [user] },
      ],
    });
    expect(parsed.trajectories[0]?.messages).toEqual([user, { role: 'assistant', content: 'Yo' }]);
  });
});
