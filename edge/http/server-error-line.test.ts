import { describe, expect, it } from 'vitest';
import { StoreError } from '../../db/errors.ts';
import { createApp } from '../app.ts';
import { ApiError } from './api-error.ts';
import { serverErrorLine } from './server-error-line.ts';

describe('serverErrorLine', () => {
  it('writes an expected 503 as one line without a stack, its cause kept and credentials masked', () => {
    const refused = new Error('connect ECONNREFUSED 10.0.0.5:5432 (postgres://app:hunter2@10.0.0.5/app)');
    const line = serverErrorLine(new ApiError('unavailable', 'the store is unreachable', { cause: refused }));
    expect(line).toBe(
      'unavailable: the store is unreachable (connect ECONNREFUSED 10.0.0.5:5432 (postgres://app:***@10.0.0.5/app))',
    );
    expect(serverErrorLine(new StoreError('not-migrated', 'run edgerl db migrate'))).toBe(
      'not-migrated: run edgerl db migrate',
    );
  });

  it('keeps the stack of an unexpected error', () => {
    const bug = new TypeError('cannot read properties of undefined');
    const line = serverErrorLine(bug);
    expect(line).toContain('TypeError: cannot read properties of undefined');
    expect(line).toContain('server-error-line.test.ts');
  });
});

describe("the app's onError", () => {
  /** An app whose store cannot be had: `failure` is what opening it throws, before any handler runs. */
  async function logged(failure: Error): Promise<{ status: number; lines: string[] }> {
    const lines: string[] = [];
    const original = console.error;
    // The default logError (the Worker's) writes with console.error.
    console.error = (...parts: unknown[]) => lines.push(parts.map(String).join(' '));
    try {
      const app = createApp({
        stores: {
          open: async () => {
            throw failure;
          },
        },
        environments: {},
        dispatcher: { dispatch: async () => {} },
        upstream: { baseUrl: 'http://127.0.0.1:9/v1', requestTokenIds: true, timeoutMs: 1000 },
        apiKeys: ['k'],
      });
      const response = await app.request('/v1/groups/00000000-0000-4000-8000-000000000000', {
        headers: { authorization: 'Bearer k' },
      });
      return { status: response.status, lines };
    } finally {
      console.error = original;
    }
  }

  it('logs an expected 503 as one line and an unexpected 500 with its stack', async () => {
    const expected = await logged(new ApiError('unavailable', 'the store is unreachable'));
    expect(expected.status).toBe(503);
    expect(expected.lines).toEqual(['edgerl edge: unavailable: the store is unreachable']);

    const unexpected = await logged(new TypeError('store is undefined'));
    expect(unexpected.status).toBe(500);
    expect(unexpected.lines).toHaveLength(1);
    expect(unexpected.lines[0]).toContain('TypeError: store is undefined\n    at ');
  });
});
