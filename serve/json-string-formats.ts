// The JSON Schema `format`s guided decoding enforces, each as a pattern (json-string-pattern.ts) that
// admits only valid values, sometimes fewer than the format allows (upper-case `T`/`Z` only, no leap
// second, dot-atom e-mail addresses only): every string written is valid, which is the promise. Formats
// as JSON Schema 2020-12 validation §7.3 defines them (https://json-schema.org/draft/2020-12/json-schema-validation#section-7.3).
// Leaves out the formats that have no exact, small grammar here (uri, hostname, duration, ...): they
// are refused by name.

// RFC 3339 §5.6 full-date with the real number of days in each month, February 29 in leap years only
// (divisible by 4, centuries only when divisible by 400: Gregorian calendar).
const leapYear = '(?:\\d\\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)';
const fullDate =
  `(?:${leapYear}-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])` +
  '|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8])))';
// RFC 3339 §5.6 full-time: partial-time and a time offset (Z or ±hh:mm); seconds 00–59.
const fullTime = '(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)';

export const formatPatterns = {
  'date-time': `^${fullDate}T${fullTime}$`,
  date: `^${fullDate}$`,
  time: `^${fullTime}$`,
  // RFC 9562 §4: 8-4-4-4-12 hex digits.
  uuid: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  // RFC 5321 §4.1.2 Mailbox, narrowed to a dot-atom local part and a domain of letter/digit/hyphen
  // labels ending in a letters-only top-level label.
  email:
    '^[A-Za-z0-9_+-]+(?:\\.[A-Za-z0-9_+-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\\.)+[A-Za-z]{2,}$',
  // RFC 2673 §3.2 dotted-quad, each part 0–255 without leading zeros.
  ipv4: '^(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)$',
} as const;

export type GuidedFormat = keyof typeof formatPatterns;

/**
 * zod 4's own format names for `.startsWith()`, `.endsWith()` and `.includes()`, which z.toJSONSchema
 * writes beside a `pattern` that says the same: accepted only with that pattern, which is enforced.
 */
export const patternFormats: ReadonlySet<string> = new Set(['starts_with', 'ends_with', 'includes']);

export const isGuidedFormat = (name: unknown): name is GuidedFormat =>
  typeof name === 'string' && Object.hasOwn(formatPatterns, name);
