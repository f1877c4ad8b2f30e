// The Worker factory a user's entry calls (`edgerl/worker`): your environments beside the shipped ones,
// the same refusals as `edgerl edge --environments`, and handlers that workerd can call. The Worker's
// runtime behaviour (queue, cron, stores) is test/workerd/'s; this checks the factory's own part in Node.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineEnvironment } from '../../edge/environments/edgerl-environment.ts';
import { EnvironmentsError } from '../../edge/environments/environments-error.ts';
import { multiHop } from '../../edge/environments/multi-hop.ts';
import { createWorker } from '../../edge/runtime/create-worker.ts';

const mine = defineEnvironment({
  name: 'echo-word',
  description: 'test',
  systemPrompt: 'repeat',
  tools: [],
  maxTurns: 1,
  taskSchema: z.object({
    id: z.string(),
    split: z.enum(['train', 'eval', 'validation']),
    prompt: z.string(),
  }),
  sampleTask: (split, seed) => ({ id: `echo:${seed}`, split, prompt: 'hi' }),
});

describe('createWorker', () => {
  it('gives the three handlers workerd calls', () => {
    expect(Object.keys(createWorker({ environments: [mine] })).sort()).toEqual([
      'fetch',
      'queue',
      'scheduled',
    ]);
    expect(Object.keys(createWorker()).sort()).toEqual(['fetch', 'queue', 'scheduled']);
  });

  it('refuses a shipped name unless the shipped ones are left out, and a record keyed wrongly', () => {
    const clash = () => createWorker({ environments: [multiHop] });
    expect(clash).toThrow(EnvironmentsError);
    expect(clash).toThrow(/"multi-hop" is the name of a shipped environment/);
    expect(() => createWorker({ environments: [multiHop], shipped: false })).not.toThrow();
    expect(() => createWorker({ environments: { other: mine } })).toThrow(
      /keys must be the environments' names/,
    );
  });

  it('answers a request it cannot serve with 503 naming the missing setting, as the shipped entry does', async () => {
    const worker = createWorker({ environments: [mine] });
    const context = { waitUntil: () => {}, passThroughOnException: () => {} };
    const response = await worker.fetch(
      new Request('https://edge.test/v1/groups'),
      { EPISODES: { send: async () => {}, sendBatch: async () => {} } } as never,
      context as never,
    );
    expect(response.status).toBe(503);
    expect(await response.text()).toMatch(/EDGE_API_KEYS/);
  });
});
