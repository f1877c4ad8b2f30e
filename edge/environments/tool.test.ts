import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from './tool.ts';

describe('defineTool', () => {
  it('shows the model the JSON schema of zod parameters and validates against them', () => {
    const tool = defineTool({
      name: 'lookup',
      description: 'Look up a key.',
      parameters: z.object({ key: z.string().min(2).describe('a key') }),
      run: ({ key }) => key,
    });
    expect(tool.spec).toEqual({
      type: 'function',
      function: {
        name: 'lookup',
        description: 'Look up a key.',
        parameters: {
          type: 'object',
          properties: { key: { type: 'string', minLength: 2, description: 'a key' } },
          required: ['key'],
        },
      },
    });
    expect(tool.parseArguments({ key: 'ab' })).toEqual({ ok: true, value: { key: 'ab' } });
    const bad = tool.parseArguments({ key: 'a' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(/^key: /);
  });

  it('passes plain JSON schema through unchanged and validates with it', () => {
    const parameters = {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 1 } },
      required: ['n'],
      additionalProperties: false,
    };
    const tool = defineTool({ name: 'count', description: 'Counts.', parameters, run: () => 'ok' });
    expect(tool.spec.function.parameters).toBe(parameters);
    expect(tool.parseArguments({ n: 3 }).ok).toBe(true);
    const missing = tool.parseArguments({});
    expect(!missing.ok && missing.message).toMatch(/^n: /);
    const fractional = tool.parseArguments({ n: 1.5 });
    expect(!fractional.ok && fractional.message).toMatch(/^n: /);
    const extra = tool.parseArguments({ n: 1, m: 2 });
    expect(!extra.ok && extra.message).toMatch(/"m"/);
  });

  it('rejects names the OpenAI API would reject, and unusable schemas, naming the tool', () => {
    const run = () => '';
    expect(() => defineTool({ name: 'look up', description: '', parameters: z.object({}), run })).toThrow(
      /tool name "look up"/,
    );
    expect(() =>
      defineTool({ name: 'x', description: '', parameters: { type: 'no-such-type' }, run }),
    ).toThrow(/tool "x": unusable parameters schema/);
  });
});
