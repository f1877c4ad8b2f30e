import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser.ts';

describe('SseParser', () => {
  it('joins data lines, skips comments and survives any split of the text', () => {
    const text =
      ': keep-alive\n\ndata: {"a":1}\n\nevent: turn\r\nid: 3\r\ndata: line one\r\ndata: line two\r\n\r\ndata: [DONE]\n\n';
    for (let cut = 0; cut <= text.length; cut += 1) {
      const parser = new SseParser();
      const events = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut)), ...parser.flush()];
      expect(events.map(({ event, data }) => ({ event, data }))).toEqual([
        { event: undefined, data: '{"a":1}' },
        { event: 'turn', data: 'line one\nline two' },
        { event: undefined, data: '[DONE]' },
      ]);
    }
  });

  it('returns a last event that has no closing blank line on flush', () => {
    const parser = new SseParser();
    expect(parser.push('data: x')).toEqual([]);
    expect(parser.flush()).toEqual([{ data: 'x', raw: 'data: x' }]);
  });
});
