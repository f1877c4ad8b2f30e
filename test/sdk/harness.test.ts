// The SDK tests' stack itself: a client trajectory started over the edge records a plain fetch
// through its trajectory URL, with the ids serve-model sampled.
import { describe, expect, it } from 'vitest';
import { servedModelName, useEdgeOverServeModel } from './support/edge-over-serve-model.ts';

const stack = useEdgeOverServeModel();

describe('the edge over serve-model', () => {
  it('records a call through the trajectory URL with token ids', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const reply = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: servedModelName,
        messages: [{ role: 'user', content: 'Hi.' }],
        max_tokens: 6,
      }),
    });
    expect(reply.status).toBe(200);
    const turns = await stack.turns(id);
    expect(turns.map((turn) => turn.role)).toEqual(['user', 'assistant']);
    expect(turns[1]?.completionTokenIds?.length).toBeGreaterThan(0);
  });
});
