// POST /v1/responses on the recording proxy, over a real serve-model and a real store: a Responses
// conversation is recorded as the same turns as the chat completions conversation it translates to
// (checked against one recorded through /chat/completions with the same seeds), streamed or not, on
// the trajectory URL and on /v1 with the API key; a refusal names the input item at fault. A reply's
// message item sent back as an `item_reference` records the same turns as its text sent inline.
import { describe, expect, it } from 'vitest';
import type { TurnRow } from '../../db/schema/turns.ts';
import { servedModelName, useEdgeOverServeModel } from '../sdk/support/edge-over-serve-model.ts';

const stack = useEdgeOverServeModel();

type Json = Record<string, unknown>;
const parameters = {
  type: 'object',
  properties: { city: { type: 'string', enum: ['Oslo', 'Bergen'] } },
  required: ['city'],
  additionalProperties: false,
};

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

/** What a turn records, less the ids the two APIs name differently. */
const recorded = (turns: readonly TurnRow[]) =>
  turns.map((turn) => ({
    role: turn.role,
    content: turn.content || null,
    calls: turn.toolCalls?.map((call) => call.function),
    completionTokenIds: turn.completionTokenIds,
  }));

describe('POST /v1/responses on the recording proxy', () => {
  it('records the turns a chat completions call records, then continues the conversation', async () => {
    const responses = await stack.startTrajectory();
    const chat = await stack.startTrajectory();
    const base = { model: servedModelName, max_output_tokens: 200, parallel_tool_calls: false };
    const first = await post(`${responses.baseURL}/responses`, {
      ...base,
      instructions: 'Use the tool.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] }],
      tools: [{ type: 'function', name: 'weather', parameters }],
      tool_choice: 'required',
      seed: 11,
    });
    expect(first.status).toBe(200);
    const firstBody = JSON.parse(first.text) as { output: Json[] };
    const call = firstBody.output.find((item) => item.type === 'function_call') as Json;
    if (!call) throw new Error(`no function call in ${first.text}`);
    expect(call).toMatchObject({ name: 'weather', status: 'completed' });
    const second = await post(`${responses.baseURL}/responses`, {
      ...base,
      instructions: 'Use the tool.',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] },
        ...firstBody.output,
        { type: 'function_call_output', call_id: call.call_id, output: 'rain' },
      ],
      tools: [{ type: 'function', name: 'weather', parameters }],
      seed: 12,
    });
    expect(second.status).toBe(200);

    // The same conversation through chat completions, with the same seeds.
    const chatTools = [{ type: 'function', function: { name: 'weather', parameters } }];
    const opening = [
      { role: 'system', content: 'Use the tool.' },
      { role: 'user', content: 'Weather in Oslo?' },
    ];
    const chatBase = {
      model: servedModelName,
      max_tokens: 200,
      parallel_tool_calls: false,
      tools: chatTools,
    };
    const chatFirst = await post(`${chat.baseURL}/chat/completions`, {
      ...chatBase,
      messages: opening,
      tool_choice: 'required',
      seed: 11,
    });
    const assistant = (JSON.parse(chatFirst.text) as { choices: { message: Json }[] }).choices[0]?.message;
    const toolCallId = (assistant?.tool_calls as { id: string }[] | undefined)?.[0]?.id;
    const chatSecond = await post(`${chat.baseURL}/chat/completions`, {
      ...chatBase,
      messages: [...opening, assistant, { role: 'tool', tool_call_id: toolCallId, content: 'rain' }],
      seed: 12,
    });
    expect(chatSecond.status).toBe(200);

    const turns = await stack.turns(responses.id);
    expect(turns.map((turn) => turn.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(turns[2]?.toolCalls?.[0]?.id).toBe(call.call_id);
    expect(turns[3]?.toolCallId).toBe(call.call_id);
    for (const turn of turns.filter((t) => t.role === 'assistant')) {
      expect(turn.completionTokenIds?.length).toBeGreaterThan(0);
    }
    expect(recorded(turns)).toEqual(recorded(await stack.turns(chat.id)));
  });

  it('streams Responses events, the exchange stored before response.completed', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const reply = await fetch(`${baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: servedModelName, input: 'Hi.', max_output_tokens: 6, stream: true }),
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await reply.text();
    const events = text
      .split('\n\n')
      .filter((block) => block.includes('data: '))
      .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as Json);
    expect(events[0]?.type).toBe('response.created');
    const terminal = events.at(-1) as { type: string; response: { output: Json[]; usage: Json } };
    expect(['response.completed', 'response.incomplete']).toContain(terminal.type);
    const deltas = events
      .filter((event) => event.type === 'response.output_text.delta')
      .map((event) => event.delta)
      .join('');
    const turns = await stack.turns(id);
    expect(turns.map((turn) => turn.role)).toEqual(['user', 'assistant']);
    expect(turns[1]?.content ?? '').toBe(deltas);
    expect(turns[1]?.completionTokenIds?.length).toBe(terminal.response.usage.output_tokens);
    // The streamed message item names turn 1; sent back as a reference, it is that turn's text.
    const itemId = terminal.response.output[0]?.id;
    expect(itemId).toBe(`msg_${id.replaceAll('-', '')}_1`);
    const next = await post(`${baseURL}/responses`, {
      model: servedModelName,
      input: [
        { role: 'user', content: 'Hi.' },
        { type: 'item_reference', id: itemId },
        { role: 'user', content: 'More.' },
      ],
      max_output_tokens: 3,
    });
    expect(next.status).toBe(200);
    const after = await stack.turns(id);
    expect(after.map((turn) => turn.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(after[1]).toEqual(turns[1]);
  });

  it('is served on /v1 with the API key and the trajectory header', async () => {
    const { id, key } = await stack.startTrajectory();
    const reply = await post(
      `${stack.edgeUrl}/v1/responses`,
      { model: servedModelName, input: 'Hi.', max_output_tokens: 3 },
      { authorization: `Bearer ${stack.apiKey}`, 'x-edgerl-trajectory': key },
    );
    expect(reply.status).toBe(200);
    expect((JSON.parse(reply.text) as Json).object).toBe('response');
    expect((await stack.turns(id)).length).toBe(2);
  });

  it('records a reply sent back as an item_reference as the same turns as its text sent inline', async () => {
    const referenced = await stack.startTrajectory();
    const inline = await stack.startTrajectory();
    const opening = { model: servedModelName, instructions: 'Be brief.', max_output_tokens: 8 };
    const then = (earlier: Json) => ({
      ...opening,
      input: [{ role: 'user', content: 'Hi.' }, earlier, { role: 'user', content: 'Again.' }],
      seed: 22,
    });
    const first = await post(`${referenced.baseURL}/responses`, { ...opening, input: 'Hi.', seed: 21 });
    expect(first.status).toBe(200);
    const message = (JSON.parse(first.text) as { output: Json[] }).output[0] as Json;
    const text = (message.content as { text: string }[])[0]?.text;
    expect(text).not.toBe(''); // a reply with text: the case @ai-sdk/openai refers to
    // The id names turn 2 of this trajectory (instructions, user, then the reply).
    expect(message.id).toBe(`msg_${referenced.id.replaceAll('-', '')}_2`);
    const second = await post(
      `${referenced.baseURL}/responses`,
      then({ type: 'item_reference', id: message.id }),
    );
    expect(second.status).toBe(200);

    const inlineFirst = await post(`${inline.baseURL}/responses`, { ...opening, input: 'Hi.', seed: 21 });
    const inlineMessage = (JSON.parse(inlineFirst.text) as { output: Json[] }).output[0] as Json;
    expect(inlineMessage.content).toEqual(message.content);
    expect((await post(`${inline.baseURL}/responses`, then(inlineMessage))).status).toBe(200);

    const turns = await stack.turns(referenced.id);
    expect(turns.map((turn) => turn.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    expect(turns[2]?.content).toBe(text);
    expect(recorded(turns)).toEqual(recorded(await stack.turns(inline.id)));
  });

  it('refuses a reference the edge did not issue to this trajectory with a 400 on input.N.id, recording nothing', async () => {
    const other = await stack.startTrajectory();
    const otherReply = await post(`${other.baseURL}/responses`, {
      model: servedModelName,
      input: 'Hi.',
      max_output_tokens: 3,
    });
    const foreign = ((JSON.parse(otherReply.text) as { output: Json[] }).output[0] as Json).id;
    const { id, baseURL } = await stack.startTrajectory();
    // Turns: 0 user, 1 an assistant message the client sent, 2 user, 3 the reply.
    const history = [
      { role: 'user', content: 'Hi.' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'Bye.' },
    ];
    const opened = await post(`${baseURL}/responses`, {
      model: servedModelName,
      input: history,
      max_output_tokens: 3,
    });
    expect(opened.status).toBe(200);
    const hex = id.replaceAll('-', '');
    const cases: [unknown, RegExp][] = [
      ['msg_1', /not an item this edge returned/],
      [`msg_${hex}_3x`, /not an item this edge returned/],
      [foreign, /another trajectory/],
      [`msg_${hex}_9`, /names turn 9, which this trajectory does not hold/],
      [`msg_${hex}_0`, /a user turn, not a reply this edge returned/],
      [`msg_${hex}_1`, /an assistant message the client sent/],
      [42, /needs the id/],
    ];
    for (const [reference, message] of cases) {
      const reply = await post(`${baseURL}/responses`, {
        model: servedModelName,
        input: [...history, { type: 'item_reference', id: reference }],
      });
      expect(reply.status, String(reference)).toBe(400);
      const { error } = JSON.parse(reply.text) as { error: { field: string; message: string } };
      expect(error.field).toBe('input.3.id');
      expect(error.message).toMatch(message);
    }
    // The type is optional: an item with only an id is a reference too.
    const typeless = await post(`${baseURL}/responses`, {
      model: servedModelName,
      input: [...history, { id: 'msg_1' }],
    });
    expect((JSON.parse(typeless.text) as { error: Json }).error.field).toBe('input.3.id');
    // Without the trajectory's key, the key's refusal: nothing of what the trajectory holds is told.
    const keyless = await post(
      `${stack.edgeUrl}/v1/responses`,
      { model: servedModelName, input: [{ type: 'item_reference', id: `msg_${hex}_9` }] },
      { authorization: `Bearer ${stack.apiKey}`, 'x-edgerl-trajectory': id },
    );
    expect(keyless.status).toBe(403);
    expect((await stack.turns(id)).length).toBe(4);
  });

  it('names the input item at fault, and refuses stored-response fields, recording nothing', async () => {
    const { id, baseURL } = await stack.startTrajectory();
    // A tool result answering no call: the proxy's order check, on the item it came from.
    const orphan = await post(`${baseURL}/responses`, {
      model: servedModelName,
      input: [
        { role: 'user', content: 'Hi.' },
        { type: 'function_call_output', call_id: 'call_none', output: 'x' },
      ],
    });
    expect(orphan.status).toBe(400);
    expect((JSON.parse(orphan.text) as { error: Json }).error.field).toBe('input.1');
    const stored = await post(`${baseURL}/responses`, {
      model: servedModelName,
      input: 'Hi.',
      previous_response_id: 'resp_x',
    });
    expect(stored.status).toBe(400);
    expect((JSON.parse(stored.text) as { error: Json }).error.field).toBe('previous_response_id');
    expect(await stack.turns(id)).toEqual([]);
  });

  it("names the upstream's refusal of a schema keyword by the Responses body's own fields", async () => {
    const { id, baseURL } = await stack.startTrajectory();
    const uri = {
      type: 'object',
      properties: { link: { type: 'string', format: 'uri' } },
      required: ['link'],
    };
    const reply = await post(`${baseURL}/responses`, {
      model: servedModelName,
      input: 'Hi.',
      tools: [{ type: 'function', name: 'open', parameters: uri, strict: true }],
      tool_choice: 'required',
    });
    expect(reply.status).toBe(400);
    const { error } = JSON.parse(reply.text) as { error: { message: string; param: string } };
    expect(error.param).toBe('tools.0.parameters');
    expect(error.message).toMatch(/^tools\.0\.parameters\.properties\.link\.format: "uri" is not supported/);
    expect(await stack.turns(id)).toEqual([]);
  });

  it.each([
    [{ model: servedModelName, input: [1] }, 'input.0'],
    [{ model: servedModelName, input: [{ role: 'user', content: 5 }] }, 'input.0.content'],
    [{ model: servedModelName, input: [{ role: 'tool', content: 'x' }] }, 'input.0.role'],
    [{ model: servedModelName, input: 'Hi.', tools: [{ type: 'function' }] }, 'tools.0.name'],
    [{ model: servedModelName, input: 'Hi.', text: { format: { type: 'xml' } } }, 'text.format.type'],
    [
      { model: servedModelName, input: [{ type: 'function_call_output', call_id: 'c', output: { a: 1 } }] },
      'input.0.output',
    ],
    [
      {
        model: servedModelName,
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }],
      },
      'input.0.content.0',
    ],
    [{ model: servedModelName }, 'input'],
  ])('refuses the hostile body %j with a 400 on %s', async (body, field) => {
    const { baseURL } = await stack.startTrajectory();
    const reply = await post(`${baseURL}/responses`, body);
    expect(reply.status).toBe(400);
    expect((JSON.parse(reply.text) as { error: Json }).error.field).toBe(field);
  });
});
