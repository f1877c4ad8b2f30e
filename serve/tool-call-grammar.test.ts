// Guided tool calls against the parser the endpoint answers with (parse-tool-calls.ts) and the chat
// templates that render calls (the tiny checkpoints' and Qwen3's own): the layout a template renders
// is accepted; every output a random walk completes parses into calls of offered tools whose arguments
// validate (zod's JSON-schema reader); "required" never ends without a call, a named function makes
// exactly its one, and strict "auto" leaves text free but closes every call it opens.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRng } from '../model/rng.ts';
import { createTokenizer, parseAssistantOutput, tinyTokenizerFiles } from '../model/tokenizer/index.ts';
import { loadQwenTokenizer } from '../model/tokenizer/test-fixtures.ts';
import type { ChatMessage, ToolCall, ToolSpec } from '../protocol/chat.ts';
import { between, feed, generate, walk } from '../test/support/json-documents.ts';
import { rendersHermesToolCalls } from './hermes-tool-call-template.ts';
import { type GuidedTool, type ToolCallMode, toolCallGrammar } from './tool-call-grammar.ts';

const lookup = { type: 'object', properties: { key: { type: 'string', maxLength: 3 } }, required: ['key'] };
const add = {
  type: 'object',
  properties: {
    a: { type: 'integer', minimum: 0, maximum: 99 },
    b: { type: 'integer' },
    note: { enum: ['x', 'y'] },
  },
  required: ['a', 'b'],
  additionalProperties: false,
};
const tools: ToolSpec[] = [
  { type: 'function', function: { name: 'lookup', parameters: lookup } },
  { type: 'function', function: { name: 'add', parameters: add } },
  { type: 'function', function: { name: 'ping' } },
];
/** The tools as the grammar takes them; `strict` names the tools marked strict. */
const asGuided = (specs: readonly ToolSpec[], strict: (name: string) => boolean = () => true): GuidedTool[] =>
  specs.map((spec) => ({
    name: spec.function.name,
    parameters: spec.function.parameters,
    strict: strict(spec.function.name),
  }));
const validators = new Map(
  tools.map((tool) => [
    tool.function.name,
    z.fromJSONSchema(
      (tool.function.parameters ?? { type: 'object' }) as Parameters<typeof z.fromJSONSchema>[0],
    ),
  ]),
);
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** One call as the templates render it, with arguments drawn for the tool's schema. */
function renderedCall(tool: ToolSpec, seed: number): string {
  const rng = createRng(seed);
  const args = generate(tool.function.parameters ?? { type: 'object' }, rng);
  return `<tool_call>\n{"name": ${JSON.stringify(tool.function.name)}, "arguments": ${args.text}}\n</tool_call>`;
}

function expectValidCalls(text: string, allowed: readonly string[]) {
  const parsed = parseAssistantOutput(text);
  expect({ text, errors: parsed.errors }).toEqual({ text, errors: [] });
  for (const call of parsed.toolCalls) {
    expect(allowed).toContain(call.function.name);
    const valid = validators.get(call.function.name)?.safeParse(JSON.parse(call.function.arguments)).success;
    expect({ text, valid }).toEqual({ text, valid: true });
  }
  return parsed;
}

describe('tool-call grammar', () => {
  it('accepts the calls the tiny and Qwen3 chat templates render, one or several', () => {
    const grammar = toolCallGrammar(asGuided(tools), { kind: 'required', parallel: true });
    const calls = tools.map((tool, index) => ({
      id: `c${index}`,
      type: 'function' as const,
      function: { name: tool.function.name, arguments: JSON.stringify({ key: 'ab', a: 1, b: 2 }) },
    }));
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [calls[0], { ...calls[0], id: 'c9' }] as ToolCall[] },
    ];
    const files = tinyTokenizerFiles();
    const tiny = createTokenizer(files.tokenizerJson, files.tokenizerConfig).applyChatTemplate(messages);
    const qwen = loadQwenTokenizer().applyChatTemplate(messages);
    for (const rendered of [tiny, qwen]) {
      const body = rendered.slice(
        rendered.lastIndexOf('<|im_start|>assistant\n') + 22,
        rendered.lastIndexOf('<|im_end|>'),
      );
      // Qwen3's template adds an empty think block before the calls of the last turn.
      const output = body.replace(/^<think>\n\n<\/think>\n\n/, '');
      expect(output.startsWith('<tool_call>\n{"name": "lookup", "arguments": ')).toBe(true);
      expect({ output, ...feed(grammar, output) }).toEqual({ output, deadAt: -1, accepts: true });
    }
    for (let seed = 0; seed < 40; seed++) {
      const text = [0, 1, 2]
        .slice(0, 1 + (seed % 3))
        .map((i) => renderedCall(tools[(seed + i) % 3] as ToolSpec, seed * 3 + i))
        .join('\n');
      expect({ text, ...feed(grammar, text) }).toEqual({ text, deadAt: -1, accepts: true });
    }
  });

  it('knows which chat templates render calls in that layout', () => {
    const files = tinyTokenizerFiles();
    expect(rendersHermesToolCalls(createTokenizer(files.tokenizerJson, files.tokenizerConfig))).toBe(true);
    expect(rendersHermesToolCalls(loadQwenTokenizer())).toBe(true);
    const plain = '{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}';
    const other = createTokenizer(files.tokenizerJson, { ...files.tokenizerConfig, chat_template: plain });
    expect(rendersHermesToolCalls(other)).toBe(false);
  });

  const modes: [string, ToolCallMode, string[]][] = [
    ['required', { kind: 'required', parallel: true }, ['lookup', 'add', 'ping']],
    ['a named function', { kind: 'named', name: 'add' }, ['add']],
  ];

  it.each(modes)('completes only into valid calls (%s)', (_, mode, allowed) => {
    const grammar = toolCallGrammar(asGuided(tools), mode);
    const rng = createRng(5);
    let ended = 0;
    for (let i = 0; i < 100; i++) {
      const call = renderedCall(
        tools.find((tool) => tool.function.name === allowed[i % allowed.length]) as ToolSpec,
        i,
      );
      const prefix = encoder.encode(call).slice(0, rng.next() < 0.3 ? 0 : between(rng, 0, call.length));
      const result = walk(grammar, rng, prefix, 1000);
      expect(result.stuck).toBe(false);
      if (!result.ended) continue;
      ended += 1;
      const parsed = expectValidCalls(decoder.decode(result.bytes), allowed);
      expect(parsed.content).toBeNull();
      if (mode.kind === 'named') expect(parsed.toolCalls).toHaveLength(1);
      else expect(parsed.toolCalls.length).toBeGreaterThanOrEqual(1);
    }
    expect(ended).toBeGreaterThan(50);
  });

  it('refuses what is not a call of an offered tool', () => {
    const required = toolCallGrammar(asGuided(tools), { kind: 'required', parallel: true });
    const named = toolCallGrammar(asGuided(tools), { kind: 'named', name: 'lookup' });
    const single = toolCallGrammar(asGuided(tools), { kind: 'required', parallel: false });
    const bad: [typeof required, string][] = [
      [required, ''],
      [required, 'Sure.'],
      [required, '<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call>'],
      [required, '<tool_call>\n{"name": "add", "arguments": {"a": 100, "b": 1}}\n</tool_call>'],
      [required, '<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>'],
      [required, '<tool_call>\n{"name": "lookup", "arguments": {"key": "abcd"}}\n</tool_call>'],
      [required, '<tool_call>\n{"name": "ping", "arguments": {}}\n</tool_call> and more'],
      [named, renderedCall(tools[1] as ToolSpec, 1)],
      [single, `${renderedCall(tools[0] as ToolSpec, 1)}\n${renderedCall(tools[2] as ToolSpec, 2)}`],
      [named, `${renderedCall(tools[0] as ToolSpec, 1)}\n${renderedCall(tools[0] as ToolSpec, 2)}`],
    ];
    for (const [grammar, text] of bad)
      expect({ text, accepts: feed(grammar, text).accepts }).toEqual({ text, accepts: false });
  });

  it('under strict "auto" leaves text free and holds each opened call to its tool', () => {
    const grammar = toolCallGrammar(
      asGuided(tools, (name) => name === 'add'),
      { kind: 'strict-auto' },
    );
    for (const text of [
      '',
      'The answer is 7.',
      `Let me look.\n${renderedCall(tools[1] as ToolSpec, 3)}`,
      '<tool_call>\n{"name": "lookup", "arguments": {"key": "not bounded, not strict"}}\n</tool_call> done',
    ]) {
      expect({ text, accepts: feed(grammar, text).accepts }).toEqual({ text, accepts: true });
    }
    for (const text of [
      '<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>',
      'x <tool_call>{"name": "add"}',
      '<tool_call>\n{"name": "nope"',
    ]) {
      expect({ text, accepts: feed(grammar, text).accepts }).toEqual({ text, accepts: false });
    }
    const rng = createRng(9);
    let calls = 0;
    for (let i = 0; i < 60; i++) {
      const result = walk(grammar, rng, encoder.encode(`Checking ${i}.\n<tool_call>`), 1500);
      expect(result.stuck).toBe(false);
      if (!result.ended) continue;
      const text = new TextDecoder().decode(result.bytes);
      const parsed = parseAssistantOutput(text);
      expect({ text, errors: parsed.errors }).toEqual({ text, errors: [] });
      calls += parsed.toolCalls.length;
      for (const call of parsed.toolCalls.filter((c) => c.function.name === 'add')) {
        expect(validators.get('add')?.safeParse(JSON.parse(call.function.arguments)).success).toBe(true);
      }
    }
    expect(calls).toBeGreaterThan(30);
  });

  it('refuses a tool whose parameters cannot be guided, naming the tool', () => {
    const bad: ToolSpec[] = [
      { type: 'function', function: { name: 'f', parameters: { type: 'object', patternProperties: {} } } },
    ];
    expect(() => toolCallGrammar(asGuided(bad), { kind: 'required', parallel: true })).toThrow(
      expect.objectContaining({
        param: 'tools.0.function.parameters',
        message: expect.stringContaining('"patternProperties"'),
      }),
    );
    const notObject: ToolSpec[] = [
      { type: 'function', function: { name: 'f', parameters: { type: 'string' } } },
    ];
    expect(() => toolCallGrammar(asGuided(notObject), { kind: 'required', parallel: true })).toThrow(
      /must describe one JSON object/,
    );
  });
});
