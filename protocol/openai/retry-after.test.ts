import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after.ts';

const now = Date.UTC(2015, 9, 21, 7, 28, 0); // Wed, 21 Oct 2015 07:28:00 GMT
const wait = (headers: Record<string, string>) => parseRetryAfter(new Headers(headers), now);

describe('parseRetryAfter', () => {
  it('reads retry-after-ms as milliseconds, before Retry-After', () => {
    expect(wait({ 'retry-after-ms': '250' })).toBe(250);
    expect(wait({ 'retry-after-ms': '12.5' })).toBe(12.5);
    expect(wait({ 'retry-after-ms': '250', 'retry-after': '3' })).toBe(250);
  });

  it('reads Retry-After delay-seconds, whole or fractional', () => {
    expect(wait({ 'retry-after': '3' })).toBe(3_000);
    expect(wait({ 'retry-after': ' 0 ' })).toBe(0);
    // 0.03 s = 30 ms (fractions as the OpenAI SDKs accept them).
    expect(wait({ 'retry-after': '0.03' })).toBeCloseTo(30, 9);
  });

  it('reads Retry-After as an HTTP date, relative to the clock given', () => {
    // 07:28:10 − 07:28:00 = 10 s.
    expect(wait({ 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' })).toBe(10_000);
    // One day and one hour later: (24 + 1) · 3600 s.
    expect(wait({ 'retry-after': 'Thu, 22 Oct 2015 08:28:00 GMT' })).toBe(25 * 3_600_000);
  });

  it('reads a date already past as no wait at all', () => {
    expect(wait({ 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' })).toBe(0);
    expect(wait({ 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' })).toBe(0);
  });

  it('ignores garbage, negatives and dates that do not exist, falling through to the next header', () => {
    expect(wait({})).toBeUndefined();
    for (const value of ['soon', 'soon 1', '-1', '1e3', '3s', '', 'Wed, 31 Feb 2015 07:28:10 GMT']) {
      expect(wait({ 'retry-after': value }), value).toBeUndefined();
    }
    expect(wait({ 'retry-after': 'Wed, 21 Oct 2015 25:28:10 GMT' })).toBeUndefined();
    // A local-time date is no HTTP date (RFC 9110 §5.6.7: always GMT).
    expect(wait({ 'retry-after': 'Wed, 21 Oct 2015 07:28:10 +0200' })).toBeUndefined();
    // A retry-after-ms that cannot be read leaves Retry-After to decide.
    expect(wait({ 'retry-after-ms': 'later', 'retry-after': '2' })).toBe(2_000);
    expect(wait({ 'retry-after-ms': '-5' })).toBeUndefined();
  });
});
