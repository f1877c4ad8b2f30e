// Guided decoding end to end on a tiny random model through the openai client: with tool_choice
// "required" every sampled completion is a tool call of an offered tool whose arguments validate
// (zod's JSON-schema reader, independent of the grammar), where the same request under "auto" almost
// never is; a named function finishes with "stop" (OpenAI's and vLLM's rule); response_format
// json_schema / json_object in chat and text completions parse and validate; streamed calls come as
// tool_calls deltas; schemas the grammar cannot follow are refused by name.
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseAssistantOutput } from '../../model/tokenizer/index.ts';
import type { ToolSpec } from '../../protocol/chat.ts';
import {
  errorOf,
  modelName,
  startTestServer,
  type TestServer,
  type VllmChat,
  withExtras,
} from './test-server.ts';

const tools: ToolSpec[] = [
  {
    type: 'function',
    function: {
      name: 'lookup',
      description: 'Look up a key.',
      // additionalProperties false: an open object lets a random model write keys without end.
      parameters: {
        type: 'object',
        properties: { key: { type: 'string', maxLength: 2 } },
        required: ['key'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'answer',
      parameters: {
        type: 'object',
        properties: { value: { type: 'integer', minimum: 0, maximum: 9 }, sure: { type: 'boolean' } },
        required: ['value'],
        additionalProperties: false,
      },
    },
  },
];
const validators = new Map(
  tools.map((tool) => [tool.function.name, z.fromJSONSchema(tool.function.parameters as never)]),
);
const question = [{ role: 'user' as const, content: 'What is the value of key a?' }];
const n = 20;

/** How many choices came back as tool calls of offered tools with valid arguments. */
function validCalls(response: VllmChat): number {
  return response.choices.filter((choice) => {
    const calls = choice.message.tool_calls ?? [];
    return (
      calls.length > 0 &&
      calls.every((call) => {
        if (call.type !== 'function') return false;
        const validator = validators.get(call.function.name);
        return validator?.safeParse(JSON.parse(call.function.arguments)).success === true;
      })
    );
  }).length;
}

describe('guided decoding', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  const chat = (extra: Record<string, unknown>) =>
    server.client.chat.completions.create(
      withExtras({ model: modelName, messages: question, seed: 3, max_tokens: 160, n, ...extra }),
    ) as Promise<VllmChat>;

  it('with tool_choice "required" every completion is a valid call; under "auto" almost none is', async () => {
    // One call each (parallel_tool_calls: false): a random model goes on calling, and 160 tokens hold one.
    const required = await chat({
      tools,
      tool_choice: 'required',
      parallel_tool_calls: false,
      return_token_ids: true,
    });
    expect(required.choices).toHaveLength(n);
    for (const choice of required.choices) {
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      // The text ends on an end-of-sequence token once the calls are complete.
      expect(server.tokenizer.eosTokenIds).toContain(choice.token_ids?.at(-1));
    }
    expect(validCalls(required)).toBe(n);
    for (const choice of required.choices) expect(choice.message.tool_calls).toHaveLength(1);
    const auto = await chat({ tools, tool_choice: 'auto' });
    const autoValid = validCalls(auto);
    console.log(`valid tool calls: ${n}/${n} with tool_choice "required", ${autoValid}/${n} with "auto"`);
    expect(autoValid).toBeLessThan(n / 2);
  });

  it('with parallel calls allowed ends every completion in one or more valid calls', async () => {
    const parallel = await chat({ tools, tool_choice: 'required', max_tokens: 1000 });
    for (const choice of parallel.choices) expect(choice.finish_reason).toBe('tool_calls');
    expect(validCalls(parallel)).toBe(n);
    const counts = parallel.choices.map((choice) => choice.message.tool_calls?.length ?? 0);
    console.log(`calls per completion with parallel_tool_calls: ${counts.join(' ')}`);
  });

  it('with a named function makes exactly that call and finishes with "stop"', async () => {
    const named = await chat({
      tools,
      tool_choice: { type: 'function', function: { name: 'answer' } },
      n: 5,
    });
    for (const choice of named.choices) {
      expect(choice.finish_reason).toBe('stop');
      expect(choice.message.tool_calls).toHaveLength(1);
      const call = choice.message.tool_calls?.[0];
      expect(call?.type === 'function' && call.function.name).toBe('answer');
    }
    expect(validCalls(named)).toBe(5);
  });

  it('streams a required call as a tool_calls delta', async () => {
    const stream = (await server.client.chat.completions.create(
      withExtras({
        model: modelName,
        messages: question,
        tools,
        tool_choice: 'required',
        parallel_tool_calls: false,
        seed: 8,
        max_tokens: 160,
        stream: true,
      }),
    )) as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
    const calls: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    let content = '';
    const finishes: string[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      content += choice.delta.content ?? '';
      calls.push(...(choice.delta.tool_calls ?? []));
      if (choice.finish_reason) finishes.push(choice.finish_reason);
    }
    expect(content).toBe('');
    expect(finishes).toEqual(['tool_calls']);
    expect(calls).toHaveLength(1);
    for (const call of calls) {
      const validator = validators.get(call.function?.name ?? '');
      expect(validator?.safeParse(JSON.parse(call.function?.arguments ?? '')).success).toBe(true);
    }
  });

  it('under "auto" with strict tools leaves text free but every call it opens parses and validates', async () => {
    const toolCall = server.tokenizer.specialTokenIds['<tool_call>'] as number;
    // The bias makes a random model open calls often; it applies only where the grammar allows the token.
    const ask = (strict: boolean) =>
      chat({
        tools: tools.map((tool) => ({ ...tool, function: { ...tool.function, strict } })),
        logit_bias: { [toolCall]: 6 },
        max_tokens: 200,
        n: 10,
        return_token_ids: true,
      });
    const problems = (response: VllmChat) =>
      response.choices.flatMap((choice) => {
        const text = server.tokenizer.decode(choice.token_ids ?? [], { skipSpecialTokens: true });
        const parsed = parseAssistantOutput(text);
        // A call cut off by max_tokens is the length's fault, not the grammar's: finish_reason says so.
        const cut = choice.finish_reason === 'length';
        return cut ? parsed.errors.filter((error) => !error.includes('never closed')) : parsed.errors;
      });
    const strict = await ask(true);
    const opened = strict.choices.filter((choice) => choice.message.tool_calls?.length).length;
    expect(opened).toBeGreaterThan(0);
    expect(problems(strict)).toEqual([]);
    for (const choice of strict.choices) {
      for (const call of choice.message.tool_calls ?? []) {
        if (call.type !== 'function') continue;
        expect(
          validators.get(call.function.name)?.safeParse(JSON.parse(call.function.arguments)).success,
        ).toBe(true);
      }
    }
    const loose = await ask(false);
    // `strict` asks for guidance and is not rendered: the prompt is the same.
    expect(strict.prompt_token_ids).toEqual(loose.prompt_token_ids);
    console.log(`malformed calls under "auto": ${problems(loose).length} without strict, 0 with strict`);
    expect(problems(loose).length).toBeGreaterThan(0);
  });

  const schema = {
    type: 'object',
    properties: {
      city: { type: 'string', maxLength: 4 },
      days: { type: 'integer', minimum: 1, maximum: 14 },
      units: { enum: ['metric', 'imperial'] },
    },
    required: ['city', 'days'],
    additionalProperties: false,
  };
  const validator = z.fromJSONSchema(schema as never);

  it('follows response_format json_schema and json_object in chat completions', async () => {
    const guided = await chat({
      response_format: { type: 'json_schema', json_schema: { name: 'forecast', schema } },
      n: 10,
    });
    for (const choice of guided.choices) {
      expect(choice.finish_reason).toBe('stop');
      expect(validator.safeParse(JSON.parse(choice.message.content ?? '')).success).toBe(true);
    }
    const free = await chat({ n: 10 });
    expect(
      free.choices.filter((choice) => validator.safeParse(safeJson(choice.message.content)).success),
    ).toHaveLength(0);
    const object = await chat({ response_format: { type: 'json_object' }, n: 10, max_tokens: 400 });
    const stopped = object.choices.filter((choice) => choice.finish_reason === 'stop');
    expect(stopped.length).toBeGreaterThan(0);
    for (const choice of stopped) {
      const value = JSON.parse(choice.message.content ?? '') as unknown;
      expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
    }
  });

  it('follows json_schema in text completions, and ends without a stop token under ignore_eos', async () => {
    const completion = await server.client.completions.create(
      withExtras({
        model: modelName,
        prompt: 'Forecast as JSON:',
        max_tokens: 120,
        n: 5,
        seed: 2,
        ignore_eos: true,
        response_format: { type: 'json_schema', json_schema: { name: 'forecast', schema } },
      }),
    );
    for (const choice of completion.choices) {
      expect(choice.finish_reason).toBe('stop');
      expect(validator.safeParse(JSON.parse(choice.text)).success).toBe(true);
    }
    // vLLM's own spellings: structured_outputs.json (here as JSON text) and guided_json.
    for (const extra of [{ structured_outputs: { json: JSON.stringify(schema) } }, { guided_json: schema }]) {
      const other = await server.client.completions.create(
        withExtras({ model: modelName, prompt: 'JSON:', max_tokens: 120, n: 3, seed: 4, ...extra }),
      );
      for (const choice of other.choices)
        expect(validator.safeParse(JSON.parse(choice.text)).success).toBe(true);
    }
  });

  it('holds 50 sampled outputs to everyday zod checks: formats, regex, bounds and lengths', async () => {
    // What users write; z.toJSONSchema emits format + pattern, minimum/maximum, min/maxLength and
    // min/maxItems, and zod itself (not the grammar's reading of the schema) judges every output.
    const everyday = z.object({
      email: z.email().max(24),
      id: z.uuid(),
      at: z.iso.datetime(),
      day: z.iso.date(),
      code: z.string().regex(/^[A-Z]{2}-\d{2,4}$/),
      count: z.number().int().min(-3).max(12),
      score: z.number().min(0).lt(1),
      name: z.string().min(2).max(6),
      tags: z
        .array(z.enum(['a', 'b']))
        .min(1)
        .max(3),
    });
    const schema = z.toJSONSchema(everyday);
    const guided = await chat({
      response_format: { type: 'json_schema', json_schema: { name: 'everyday', schema } },
      n: 50,
      seed: 100,
      max_tokens: 400,
    });
    expect(guided.choices).toHaveLength(50);
    const failures = guided.choices
      .map((choice) => ({ finish: choice.finish_reason, content: choice.message.content }))
      .filter(({ finish, content }) => finish !== 'stop' || !everyday.safeParse(safeJson(content)).success);
    expect(failures).toEqual([]);
  });

  it('refuses what it cannot guide with a 400 naming the field and the keyword', async () => {
    const post = async (body: Record<string, unknown>) => {
      const response = await fetch(`${server.serving.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: modelName, messages: question, ...body }),
      });
      expect(response.status).toBe(400);
      return errorOf(response);
    };
    const strictTool = {
      type: 'function',
      function: {
        name: 'f',
        strict: true,
        parameters: { type: 'object', properties: { a: { type: 'string', format: 'uri' } } },
      },
    };
    expect(await post({ tools: [strictTool] })).toMatchObject({
      param: 'tools.0.function.parameters',
      message: expect.stringContaining(
        'tools.0.function.parameters.properties.a.format: "uri" is not supported by guided decoding',
      ),
    });
    const lookahead = { type: 'object', properties: { d: z.toJSONSchema(z.string().regex(/^(?!x)/)) } };
    expect(
      await post({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: lookahead } } }),
    ).toMatchObject({
      message: expect.stringContaining('.properties.d.pattern: lookahead and lookbehind are not supported'),
    });
    expect(
      await post({ tools, tool_choice: { type: 'function', function: { name: 'nope' } } }),
    ).toMatchObject({
      param: 'tool_choice',
      message: 'The tool specified in `tool_choice` does not match any of the specified `tools`',
    });
    expect(
      await post({ tools, tool_choice: 'required', response_format: { type: 'json_object' } }),
    ).toMatchObject({
      message: 'only one kind of guided decoding per request; got response_format and tool_choice',
    });
    expect(
      await post({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }),
    ).toMatchObject({
      param: 'response_format',
    });
  });
});

function safeJson(text: string | null): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
}
