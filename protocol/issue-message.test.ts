import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { issueMessage } from './issue-message.ts';

/** The first issue of validating `value`, in words: `path: message`. */
function words(schema: z.ZodType, value: unknown): string {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected an issue');
  const { path, message } = issueMessage(parsed.error.issues[0] as z.core.$ZodIssue, value);
  return `${path.join('.')}: ${message}`;
}

describe('issueMessage', () => {
  const body = z.strictObject({
    name: z.string().min(1).max(3),
    size: z.number().int().min(1).max(8),
    tags: z.array(z.string()).min(1).max(2),
    mode: z.enum(['fast', 'slow']).optional(),
    content: z
      .union([z.string(), z.array(z.strictObject({ type: z.literal('text'), text: z.string() }))])
      .optional(),
    item: z
      .discriminatedUnion('kind', [z.object({ kind: z.literal('a') }), z.object({ kind: z.literal('b') })])
      .optional(),
  });
  const good = { name: 'ab', size: 2, tags: ['x'] };

  it('names what is missing, and what type is wanted instead of the one sent', () => {
    expect(words(body, { size: 2, tags: ['x'] })).toBe('name: is required (a string)');
    expect(words(body, { ...good, size: '2' })).toBe('size: must be a number, not a string');
    expect(words(body, { ...good, size: 1.5 })).toBe(
      'size: must be an integer, not a fractional number (1.5)',
    );
    expect(words(body, { ...good, tags: 'x' })).toBe('tags: must be an array, not a string');
  });

  it('says the bounds in JSON terms', () => {
    expect(words(body, { ...good, name: '' })).toBe('name: must not be empty');
    expect(words(body, { ...good, name: 'abcd' })).toBe('name: must be at most 3 characters long');
    expect(words(body, { ...good, size: 9 })).toBe('size: must be at most 8; got 9');
    expect(words(body, { ...good, tags: [] })).toBe('tags: must not be empty');
    expect(words(body, { ...good, tags: ['a', 'b', 'c'] })).toBe(
      'tags: must have at most 2 items (it has 3)',
    );
  });

  it('lists the accepted values, and names an unknown key itself', () => {
    expect(words(body, { ...good, mode: 'medium' })).toBe(
      'mode: "medium" is not accepted here; send one of "fast" or "slow"',
    );
    expect(words(body, { ...good, item: { kind: 'c' } })).toBe(
      'item.kind: "c" is not accepted here; send one of "a" or "b"',
    );
    expect(words(body, { ...good, item: {} })).toBe('item.kind: is required; send one of "a" or "b"');
    expect(words(body, { ...good, colour: 'red' })).toBe('colour: unknown field');
  });

  it('follows a union into the branch the value fits, or names the types it may have', () => {
    expect(words(body, { ...good, content: [{ type: 'text', text: 'a' }, { type: 'image' }] })).toBe(
      'content.1.type: "image" is not accepted here; send "text"',
    );
    expect(words(body, { ...good, content: 4 })).toBe('content: must be a string or an array, not a number');
  });

  it("keeps a refinement's own words", () => {
    const even = z.object({ n: z.number().refine((n) => n % 2 === 0, 'must be even: send 2, 4, …') });
    expect(words(even, { n: 3 })).toBe('n: must be even: send 2, 4, …');
  });
});
