// How long a server asks a client to wait before trying again, in milliseconds: OpenAI's
// `retry-after-ms` and the standard `Retry-After`. What to do with the wait is with-retries.ts's job.

/** What is read from a response's headers; the fetch `Headers` class fits. */
export interface HeaderSource {
  get(name: string): string | null;
}

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * The wait a response asks for, or undefined when it names none that can be read.
 * - `retry-after-ms`: milliseconds. Not a standard header; OpenAI sends it, and its SDKs read it
 *   before `Retry-After` because it is the more precise of the two (openai-node `retryRequest`).
 * - `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3). The RFC's delay-seconds is a
 *   whole number; fractions are accepted too, as the OpenAI SDKs do (they read it with parseFloat).
 *   A date is read in the IMF-fixdate form that RFC 9110 §5.6.7 requires senders to generate
 *   (`Sun, 06 Nov 1994 08:49:37 GMT`); a date already past means "now" (0).
 * Negative numbers and anything else are ignored: the caller falls back to its own backoff.
 */
export function parseRetryAfter(headers: HeaderSource, nowMs: number): number | undefined {
  const milliseconds = nonNegativeNumber(headers.get('retry-after-ms'));
  if (milliseconds !== undefined) return milliseconds;
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = nonNegativeNumber(value);
  if (seconds !== undefined) return seconds * 1000;
  const date = imfFixdate(value.trim());
  return date === undefined ? undefined : Math.max(0, date - nowMs);
}

function nonNegativeNumber(value: string | null): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  return /^\d+(?:\.\d+)?$/.test(trimmed) ? Number(trimmed) : undefined;
}

/**
 * Epoch milliseconds of an IMF-fixdate, or undefined. Parsed by hand rather than with Date.parse,
 * which accepts many other strings (V8 reads "soon 1" as a date) and reads some forms as local time.
 */
function imfFixdate(text: string): number | undefined {
  const match =
    /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/.exec(
      text,
    );
  if (!match) return undefined;
  const field = (index: number) => Number(match[index]);
  const [day, year, hour, minute, second] = [field(1), field(3), field(4), field(5), field(6)];
  const month = months.indexOf(match[2] ?? '');
  // Date.UTC rolls 31 Feb over into March; a day that does not exist is not a date. Second 60 is a
  // leap second, which IMF-fixdate allows.
  const midnight = Date.UTC(year, month, day);
  const exists =
    month >= 0 && new Date(midnight).getUTCDate() === day && hour < 24 && minute < 60 && second <= 60;
  return exists ? midnight + ((hour * 60 + minute) * 60 + second) * 1000 : undefined;
}
