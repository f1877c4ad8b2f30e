import { describe, expect, it } from 'vitest';
import { isRetryableStatus } from './retryable-status.ts';

describe('isRetryableStatus', () => {
  it('retries 408, 409, 429 and every 5xx, and no other status', () => {
    const retried = [408, 409, 429, 500, 502, 503, 504, 599];
    const final = [200, 301, 400, 401, 403, 404, 405, 410, 413, 422, 428, 431, 499];
    for (const status of retried) expect(isRetryableStatus(status), String(status)).toBe(true);
    for (const status of final) expect(isRetryableStatus(status), String(status)).toBe(false);
  });
});
