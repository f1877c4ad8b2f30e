// Realistic bad chat requests through the recording proxy (a trajectory URL, serve-model behind it):
// each is a 400 whose message names the field and says what to send, in words rather than zod's
// "Invalid input"; the edge's own refusals reach no model, and a field only the endpoint checks
// (`response_format`) comes back in serve-model's words, passed through. Nothing is recorded.
import { describe, expect, it } from 'vitest';
import { servedModelName, useEdgeOverServeModel } from '../sdk/support/edge-over-serve-model.ts';

const stack = useEdgeOverServeModel();

const user = { role: 'user', content: 'What is the weather in Paris?' };
const call = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"city":"Paris"}' } };

/** Body, then the field and the message the answer must carry. */
const cases: [string, Record<string, unknown>, string, string][] = [
  [
    'an image part',
    {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          ],
        },
      ],
    },
    'messages.0.content.1',
    'messages.0.content.1: image parts are not supported by this endpoint; send text parts: {"type": "text", "text": "…"}',
  ],
  [
    'an unknown role',
    { messages: [user, { role: 'function', name: 'lookup', content: 'sunny' }] },
    'messages.1.role',
    'messages.1.role: "function" is not accepted here; send one of "system", "developer", "user", "assistant" or "tool"',
  ],
  [
    'a tool message without tool_call_id',
    {
      messages: [
        user,
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', content: 'sunny' },
      ],
    },
    'messages.2.tool_call_id',
    'messages.2.tool_call_id: is required on a tool message: the id of the assistant tool call it answers',
  ],
  [
    'n > 1',
    { messages: [user], n: 3 },
    'n',
    'n: the recording proxy records one choice; send n: 1 or leave it out',
  ],
  [
    'content that is neither text nor parts',
    { messages: [{ role: 'user', content: { text: 'hi' } }] },
    'messages.0.content',
    'messages.0.content: must be a string or an array, not an object',
  ],
];

describe('a bad chat request through the recording proxy', () => {
  it.each(cases)('%s is a 400 naming the field in words', async (_, body, field, message) => {
    const { id, baseURL } = await stack.startTrajectory();
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: servedModelName, max_tokens: 4, ...body }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-should-retry')).toBe('false');
    expect(((await response.json()) as { error: unknown }).error).toEqual({
      code: 'invalid-request',
      field,
      message,
    });
    expect(await stack.turns(id)).toEqual([]);
  });

  it("passes serve-model's words for a bad response_format through unchanged", async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: servedModelName,
        messages: [user],
        max_tokens: 4,
        response_format: { type: 'json' },
      }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: unknown }).error).toMatchObject({
      message:
        'response_format.type: "json" is not accepted here; send one of "text", "json_object" or "json_schema"',
      param: 'response_format.type',
      type: 'BadRequestError',
    });
    expect(await stack.turns(id)).toEqual([]);
  });
});
