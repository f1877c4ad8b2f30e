// Whether a tokenizer's chat template renders tool calls in the Hermes layout that guided tool calls
// are written in (tool-call-grammar.ts) and parse-tool-calls.ts reads: a guided call in another
// model's format would be text its template never shows it. Checked once per tokenizer by rendering a
// probe call.
import type { ChatTokenizer } from '../model/tokenizer/index.ts';
import type { ChatMessage, ToolSpec } from '../protocol/chat.ts';

const known = new WeakMap<ChatTokenizer, boolean>();

const probe: ToolSpec = {
  type: 'function',
  function: { name: 'probe', parameters: { type: 'object', properties: {} } },
};
const messages: ChatMessage[] = [
  { role: 'user', content: 'x' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'probe', arguments: '{}' } }],
  },
];

export function rendersHermesToolCalls(tokenizer: ChatTokenizer): boolean {
  let answer = known.get(tokenizer);
  if (answer === undefined) {
    try {
      const text = tokenizer.applyChatTemplate(messages, { tools: [probe] });
      answer = text.includes('<tool_call>\n{"name": "probe", "arguments": {}}\n</tool_call>');
    } catch {
      answer = false;
    }
    known.set(tokenizer, answer);
  }
  return answer;
}
