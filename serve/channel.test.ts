import { describe, expect, it } from 'vitest';
import { createChannel } from './channel.ts';

async function drain<T>(channel: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of channel) out.push(value);
  return out;
}

describe('createChannel', () => {
  it('yields values pushed before and after the consumer waits, then ends on close', async () => {
    const channel = createChannel<number>();
    channel.push(1);
    const done = drain(channel);
    await Promise.resolve();
    channel.push(2);
    setTimeout(() => {
      channel.push(3);
      channel.close();
      channel.push(4); // after close: dropped
    }, 1);
    expect(await done).toEqual([1, 2, 3]);
  });

  it('throws the failure after the queued values', async () => {
    const channel = createChannel<string>();
    channel.push('a');
    channel.fail(new Error('engine down'));
    channel.fail(new Error('second failure is ignored'));
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const value of channel) seen.push(value);
      })(),
    ).rejects.toThrow('engine down');
    expect(seen).toEqual(['a']);
  });
});
