// Checks the stand-in judge HTTP server (a test double) itself: it reads the blocks it is sent, plays
// the scripted behaviours, refuses formats it is told not to accept, and catches unscripted calls.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answerWith, type JudgeServer, startJudgeServer } from './judge-server.ts';

const post = (server: JudgeServer, body: unknown) =>
  fetch(`${server.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: JSON.stringify(body),
  });

const userText = [
  '<context>',
  '{"role":"user","content":"q"}',
  '</context>',
  '',
  'Trajectories:',
  '',
  '<trajectory id="a2a">',
  '{"role":"assistant","content":"one"}',
  '</trajectory>',
  '',
  '<trajectory id="b3b">',
  '{"role":"assistant","content":"two"}',
  '</trajectory>',
].join('\n');
const request = {
  model: 'm',
  messages: [
    { role: 'system', content: 's' },
    { role: 'user', content: userText },
  ],
  response_format: { type: 'json_schema', json_schema: {} },
};

describe('judge-server test double', () => {
  let server: JudgeServer;
  beforeEach(async () => {
    server = await startJudgeServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it('parses the blocks it is sent and answers with the scripted scores', async () => {
    server.enqueue(answerWith((block) => (block.label === 'a2a' ? 0.25 : 0.75)));
    const response = await post(server, request);
    expect(response.status).toBe(200);
    const completion = (await response.json()) as {
      choices: { message: { content: string } }[];
      usage: unknown;
    };
    expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual({
      scores: [
        { trajectory_id: 'a2a', explanation: 'block 1 of 2', score: 0.25 },
        { trajectory_id: 'b3b', explanation: 'block 2 of 2', score: 0.75 },
      ],
    });
    expect(completion.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 100 });
    const seen = server.requests[0];
    expect(seen?.context).toEqual([{ role: 'user', content: 'q' }]);
    expect(seen?.blocks.map((block) => [block.label, block.position, block.messages])).toEqual([
      ['a2a', 0, [{ role: 'assistant', content: 'one' }]],
      ['b3b', 1, [{ role: 'assistant', content: 'two' }]],
    ]);
    expect(seen?.authorization).toBe('Bearer k');
    expect(seen?.responseFormat).toBe('json_schema');
    server.verify();
  });

  it('fails an unscripted call with a 500 and makes verify() throw', async () => {
    const response = await post(server, request);
    expect(response.status).toBe(500);
    expect(await response.text()).toContain('unscripted call #1');
    expect(() => server.verify()).toThrow(/unscripted call #1/);
  });

  it('fails a call to the wrong path, and reports behaviours left unused', async () => {
    server.enqueue({ kind: 'no-choices' });
    const response = await fetch(`${server.baseUrl}/completions`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(500);
    expect(() => server.verify()).toThrow(
      /unexpected POST \/v1\/completions.*1 scripted behaviour\(s\) never used/,
    );
  });

  it('refuses a response_format it does not accept without using up a behaviour', async () => {
    await server.close();
    server = await startJudgeServer({ accepts: { json_schema: false } });
    server.enqueue({ kind: 'status', status: 503 });
    const refused = await post(server, request);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("response_format type 'json_schema' is not supported");
    const next = await post(server, { ...request, response_format: { type: 'json_object' } });
    expect(next.status).toBe(503);
    server.verify();
  });
});
