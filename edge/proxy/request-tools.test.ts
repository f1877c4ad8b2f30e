// Which tool list a proxy request makes the trajectory store, against the stored one.
import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../protocol/chat.ts';
import { ApiError } from '../http/api-error.ts';
import { requestTools } from './request-tools.ts';

const lookup: ToolSpec = { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } };
const search: ToolSpec = { type: 'function', function: { name: 'search', description: 'Search.' } };

describe('requestTools', () => {
  it('stores the first list, and a list that differs from the stored one', () => {
    expect(requestTools([lookup], null)).toEqual([lookup]);
    expect(requestTools([lookup, search], [lookup])).toEqual([lookup, search]);
  });

  it('writes nothing when the request repeats the stored list (key order aside)', () => {
    const reordered = { function: { parameters: { type: 'object' }, name: 'lookup' }, type: 'function' };
    expect(requestTools([reordered], [lookup])).toBeUndefined();
  });

  it('records "no tools" once, and never erases a stored list', () => {
    expect(requestTools(undefined, null)).toEqual([]);
    expect(requestTools(null, null)).toEqual([]);
    expect(requestTools(undefined, [])).toBeUndefined();
    expect(requestTools(undefined, [lookup])).toBeUndefined();
    expect(requestTools([], [lookup])).toBeUndefined();
  });

  it('keeps the spec fields and drops what the template does not render', () => {
    const strict = {
      type: 'function',
      function: { name: 'lookup', parameters: { type: 'object' }, strict: true },
    };
    expect(requestTools([strict], null)).toEqual([lookup]);
  });

  it('refuses tools that are not function specs, naming the field', () => {
    const refused = () => requestTools([{ type: 'web_search' }], null);
    expect(refused).toThrow(ApiError);
    expect(refused).toThrow(/^tools: /);
  });
});
