import { describe, expect, it } from 'vitest';
import { findItemReferences, resolveItemReferences } from './item-references.ts';
import { readRecordedItemId, recordedItemId } from './recorded-item-id.ts';
import type { ResponsesRequest } from './responses-request.ts';
import { toChatRequest } from './to-chat-request.ts';
import { toResponseObject } from './to-response-object.ts';

const trajectoryId = '0B5E2C1A-1111-4222-8333-444455556666';
const other = '9f0e2c1a-1111-4222-8333-444455556666';
const own = recordedItemId(trajectoryId, 2);

const request = (input: ResponsesRequest['input']): ResponsesRequest => ({ model: 'm', input });
const turns = [
  { index: 0, role: 'user', content: 'Hi.' },
  { index: 1, role: 'assistant', content: 'Hello.', metadata: { fromClient: true as const } },
  { index: 2, role: 'assistant', content: 'Hey there.', metadata: { recordedBy: 'proxy' } },
];

describe('recorded item ids', () => {
  it('name the trajectory (any case, no dashes) and the turn, and read back', () => {
    expect(own).toBe('msg_0b5e2c1a111142228333444455556666_2');
    expect(readRecordedItemId(own)).toEqual({
      trajectoryHex: '0b5e2c1a111142228333444455556666',
      turnIndex: 2,
      part: 0,
    });
    expect(readRecordedItemId(`${own}_1`)?.part).toBe(1);
    for (const id of ['msg_1', `${own}_0`, `${own}x`, `fc${own.slice(3)}`, `msg_${'g'.repeat(32)}_2`]) {
      expect(readRecordedItemId(id), id).toBeUndefined();
    }
  });

  it('are the message ids of a response whose context names one; function calls keep theirs', () => {
    const completion = {
      model: 'm',
      choices: [
        {
          message: {
            content: 'Hey there.',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const context = { id: 'resp_abc', createdAt: 0, request: request('Hi.'), messageItemId: own };
    const output = toResponseObject(completion, context).output as { id: string }[];
    expect(output.map((item) => item.id)).toEqual([own, 'fc_abc_0']);
  });
});

describe('findItemReferences', () => {
  it('reads each reference, typed or with only an id, and leaves other items alone', () => {
    const found = findItemReferences(
      request([{ role: 'user', content: 'Hi.' }, { type: 'item_reference', id: own }, { id: `${own}_1` }]),
      trajectoryId,
    );
    expect(found).toEqual({
      ok: true,
      references: [
        { position: 1, id: own, turnIndex: 2, part: 0 },
        { position: 2, id: `${own}_1`, turnIndex: 2, part: 1 },
      ],
    });
    expect(findItemReferences(request('Hi.'), trajectoryId)).toEqual({ ok: true, references: [] });
  });

  it.each([
    ['msg_1', /not an item this edge returned/],
    [recordedItemId(other, 2), /another trajectory/],
    [7, /needs the id/],
    ['x'.repeat(10_000), /"x{80}…" is not an item/],
  ])('refuses %j on input.1.id', (id, message) => {
    const found = findItemReferences(
      request([
        { role: 'user', content: 'Hi.' },
        { type: 'item_reference', id },
      ]),
      trajectoryId,
    );
    expect(found).toMatchObject({ ok: false, field: 'input.1.id', message: expect.stringMatching(message) });
  });
});

describe('resolveItemReferences', () => {
  const resolve = (input: ResponsesRequest['input']) => {
    const found = findItemReferences(request(input), trajectoryId);
    if (!found.ok) throw new Error(found.message);
    return resolveItemReferences(request(input), found.references, turns);
  };

  it('gives the chat request the inline text gives, text after a call joining the first item', () => {
    const opening = [
      { role: 'user', content: 'Hi.' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'Go.' },
    ];
    const call = { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' };
    const resolved = resolve([...opening, { type: 'item_reference', id: own }, call, { id: `${own}_1` }]);
    if (!resolved.ok) throw new Error(resolved.message);
    const inline = toChatRequest(
      request([
        ...opening,
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hey there.' }] },
        call,
      ]),
    );
    expect(toChatRequest(resolved.request)).toEqual(inline);
  });

  it.each([
    [9, /names turn 9, which this trajectory does not hold/],
    [0, /names turn 0, a user turn, not a reply/],
    [1, /an assistant message the client sent/],
  ])('refuses a reference to turn %i on its input.N.id', (turn, message) => {
    const resolved = resolve([{ role: 'user', content: 'Hi.' }, { id: recordedItemId(trajectoryId, turn) }]);
    expect(resolved).toMatchObject({
      ok: false,
      field: 'input.1.id',
      message: expect.stringMatching(message),
    });
  });
});
