import { describe, expect, it } from 'vitest';
import { InMemoryTrajectorySink } from './in-memory-trajectory-sink.ts';

const id = '00000000-0000-4000-8000-000000000001';

describe('InMemoryTrajectorySink', () => {
  it('takes a repeated append as a no-op and refuses a conflicting or out-of-order one', async () => {
    const sink = new InMemoryTrajectorySink(id);
    const turn = { trajectoryId: id, index: 0, role: 'user' as const, content: 'hi' };
    await sink.appendTurn(turn);
    await sink.appendTurn(turn);
    expect(sink.turns).toHaveLength(1);
    await expect(sink.appendTurn({ ...turn, content: 'bye' })).rejects.toThrow(
      'turn 0 already written with different content',
    );
    await expect(sink.appendTurn({ ...turn, index: 2 })).rejects.toThrow(
      'turn 2 out of order: expected index 1',
    );
    await expect(sink.appendTurn({ ...turn, index: 1, role: 'tool' })).rejects.toThrow(
      /invalid turn 1: toolCallId/,
    );
  });

  it('refuses turns after finish, and a second finish', async () => {
    const sink = new InMemoryTrajectorySink(id);
    await sink.finish({ status: 'finished' });
    await expect(sink.appendTurn({ trajectoryId: id, index: 0, role: 'user', content: 'x' })).rejects.toThrow(
      /is finished/,
    );
    await expect(sink.finish({ status: 'error', errorReason: 'x' })).rejects.toThrow(/already finished/);
  });
});
