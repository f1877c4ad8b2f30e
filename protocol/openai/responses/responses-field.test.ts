import { describe, expect, it } from 'vitest';
import { renameInMessage, responsesField } from './responses-field.ts';

describe('responsesField', () => {
  const sources = ['instructions', 'input.0', 'input.2'];

  it('names the input item a chat message came from, keeping a content part', () => {
    expect(responsesField('messages.2', sources)).toBe('input.2');
    expect(responsesField('messages.2.tool_call_id', sources)).toBe('input.2');
    expect(responsesField('messages.1.content.0', sources)).toBe('input.0.content.0');
    expect(responsesField('messages.9', sources)).toBeUndefined();
  });

  it('names tools, the text format and the token limit as a Responses body has them', () => {
    expect(responsesField('tools.1.function.parameters.properties.when.format', sources)).toBe(
      'tools.1.parameters.properties.when.format',
    );
    expect(responsesField('tools.0.function', sources)).toBe('tools.0');
    expect(responsesField('response_format.json_schema.schema.properties.n.multipleOf', sources)).toBe(
      'text.format.schema.properties.n.multipleOf',
    );
    expect(responsesField('response_format.type', sources)).toBe('text.format.type');
    expect(responsesField('max_tokens', sources)).toBe('max_output_tokens');
    expect(responsesField('max_tokens_extra', sources)).toBeUndefined();
    expect(responsesField('tool_choice', sources)).toBeUndefined();
    expect(responsesField('tools.0.functional', sources)).toBeUndefined();
  });

  it('renames the field a message begins with, and nothing else', () => {
    expect(renameInMessage('max_tokens: too many', sources)).toBe('max_output_tokens: too many');
    expect(
      renameInMessage('tools.0.function.parameters.properties.x.format: "uri" is not supported', sources),
    ).toBe('tools.0.parameters.properties.x.format: "uri" is not supported');
    expect(renameInMessage("'max_tokens' is too large: 9.", sources)).toBe(
      "'max_output_tokens' is too large: 9.",
    );
    expect(renameInMessage('too many max_tokens', sources)).toBe('too many max_tokens');
    expect(renameInMessage('model: not served', sources)).toBe('model: not served');
  });
});
