import { describe, expect, it } from 'vitest';
import type { ResponseContext } from './response-envelope.ts';
import { type ResponseEvent, ResponseEventStream } from './response-event-stream.ts';

const context: ResponseContext = { id: 'resp_s', createdAt: 1, request: { model: 'tiny', input: 'Hi.' } };

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  model: 'tiny',
  choices: [{ index: 0, delta, finish_reason: null, ...extra }],
});

function run(chunks: unknown[]): ResponseEvent[] {
  const stream = new ResponseEventStream(context);
  return [...stream.start(), ...chunks.flatMap((c) => stream.push(c)), ...stream.finish()];
}

describe('ResponseEventStream', () => {
  it('streams text, then tool calls, as items with their deltas and a completed response with usage', () => {
    const events = run([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }, { token_ids: [1] }),
      chunk({ content: 'lo' }, { token_ids: [2] }),
      chunk({
        tool_calls: [
          { index: 0, id: 'call_x', type: 'function', function: { name: 'f', arguments: '{"a"' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      chunk(
        {
          tool_calls: [
            { index: 1, id: 'call_y', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        { finish_reason: 'tool_calls' },
      ),
      { model: 'tiny', choices: [], usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 } },
    ]);
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, n) => n));
    expect(events[9]).toMatchObject({
      output_index: 1,
      item: { type: 'function_call', id: 'fc_s_0', call_id: 'call_x', name: 'f', arguments: '' },
    });
    expect(events[12]).toMatchObject({ item_id: 'fc_s_0', output_index: 1, arguments: '{"a":1}' });
    const completed = events.at(-1)?.response as Record<string, unknown>;
    expect(completed).toMatchObject({
      status: 'completed',
      output: [
        { type: 'message', id: 'msg_s_0', content: [{ type: 'output_text', text: 'Hello' }] },
        { type: 'function_call', call_id: 'call_x', name: 'f', arguments: '{"a":1}', status: 'completed' },
        { type: 'function_call', call_id: 'call_y', name: 'g', arguments: '{}' },
      ],
      usage: { input_tokens: 4, output_tokens: 3, total_tokens: 7 },
      token_ids: [1, 2],
    });
  });

  it('ends a length finish as response.incomplete and an error chunk as response.failed', () => {
    const cut = run([chunk({ content: 'a' }, { finish_reason: 'length' })]);
    expect(cut.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
    const failed = run([
      chunk({ content: 'a' }),
      { error: { message: 'edgerl: the reply was not recorded' } },
    ]);
    expect(failed.at(-1)).toMatchObject({
      type: 'response.failed',
      response: {
        status: 'failed',
        error: { code: 'server_error', message: 'edgerl: the reply was not recorded' },
      },
    });
  });

  it('answers a stream with no content with one empty message, and finishes once', () => {
    const stream = new ResponseEventStream(context);
    stream.start();
    const first = stream.finish();
    expect(first.map((event) => event.type)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(stream.finish()).toEqual([]);
  });
});
