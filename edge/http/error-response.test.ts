import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { StoreError, storeErrorCodes } from '../../db/errors.ts';
import { ApiError } from './api-error.ts';
import { errorResponse, mayRetry } from './error-response.ts';
import { errorSurface } from './error-surface.ts';

describe('errorResponse', () => {
  it("keeps an ApiError's status, code and field", () => {
    expect(
      errorResponse(new ApiError('invalid-request', 'groupSize: too big', { field: 'groupSize' })),
    ).toEqual({
      status: 400,
      body: { error: { code: 'invalid-request', message: 'groupSize: too big', field: 'groupSize' } },
      log: false,
    });
  });

  it('maps every store error code to a status', () => {
    const statuses = Object.fromEntries(
      storeErrorCodes.map((code) => [code, errorResponse(new StoreError(code, 'x')).status]),
    );
    expect(statuses).toEqual({
      validation: 400,
      'not-found': 404,
      conflict: 409,
      'history-mismatch': 409,
      'trajectory-closed': 409,
      'lease-lost': 409,
      // The writer refusals (docs/edge.md, "Who writes a trajectory").
      'trajectory-owned': 409,
      'trajectory-key': 403,
      'policy-lease-lost': 409,
      'not-migrated': 503,
    });
  });

  it("keeps an HTTPException's status and hides anything else behind a 500", () => {
    expect(errorResponse(new HTTPException(413, { message: 'big' })).status).toBe(413);
    const hidden = errorResponse(new Error('password authentication failed for user "postgres" at 10.0.0.1'));
    expect(hidden).toEqual({
      status: 500,
      body: { error: { code: 'internal', message: 'internal error' } },
      log: true,
    });
  });

  it('answers a store that cannot be reached (a refused socket, SQLSTATE 08006) with 503, without its text', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432 postgres://u:pw@db'), {
      code: 'ECONNREFUSED',
    });
    const cut = Object.assign(new Error('connection failure'), { code: '08006' });
    for (const error of [refused, new Error('Failed query', { cause: cut })]) {
      expect(errorResponse(error)).toEqual({
        status: 503,
        body: {
          error: { code: 'unavailable', message: 'the store cannot be reached right now; retry later' },
        },
        log: true,
      });
    }
  });

  it('tells clients to retry only what can succeed later (x-should-retry)', () => {
    expect([400, 403, 404, 409, 413, 422].map(mayRetry)).toEqual([false, false, false, false, false, false]);
    expect([408, 429, 500, 502, 503].map(mayRetry)).toEqual([true, true, true, true, true]);
  });

  it('answers a 409 on the OpenAI-compatible routes as a 400 with the same code, which no SDK retries', () => {
    const owned = new ApiError('trajectory-owned', 'written only by its rollout runner');
    const conflict = new StoreError('history-mismatch', 'messages.1: differs from stored turn 1');
    expect(errorResponse(owned, 'openai')).toMatchObject({
      status: 400,
      body: { error: { code: 'trajectory-owned' } },
    });
    expect(errorResponse(conflict, 'openai')).toMatchObject({
      status: 400,
      body: { error: { code: 'conflict' } },
    });
    expect(errorResponse(owned).status).toBe(409);
    expect(errorResponse(conflict, 'edge').status).toBe(409);
    // Other statuses keep theirs on both surfaces: a 403 and a 503 are not retried / retried as they are.
    expect(errorResponse(new ApiError('trajectory-key', 'x'), 'openai').status).toBe(403);
    expect(errorResponse(new ApiError('unavailable', 'x'), 'openai').status).toBe(503);
  });
});

describe('errorSurface', () => {
  it('names the routes an OpenAI SDK calls', () => {
    const surfaces = Object.fromEntries(
      [
        '/v1/chat/completions',
        '/v1/responses',
        '/v1/models',
        '/t/abc.def/v1/chat/completions',
        '/t/abc.def/v1/models',
        '/t/abc.def/finish',
        '/v1/trajectories/x/finish',
        '/v1/rollouts',
        '/v1/chatty',
        '/console',
      ].map((path) => [path, errorSurface(path)]),
    );
    expect(surfaces).toEqual({
      '/v1/chat/completions': 'openai',
      '/v1/responses': 'openai',
      '/v1/models': 'openai',
      '/t/abc.def/v1/chat/completions': 'openai',
      '/t/abc.def/v1/models': 'openai',
      '/t/abc.def/finish': 'edge',
      '/v1/trajectories/x/finish': 'edge',
      '/v1/rollouts': 'edge',
      '/v1/chatty': 'edge',
      '/console': 'edge',
    });
  });
});
