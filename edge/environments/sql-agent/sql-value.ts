// One canonical text form per SQL value, so that results from different drivers (numeric as a
// string in pg, a number in JSON, a Date or a 'YYYY-MM-DD' string) compare equal when they mean
// the same thing.

/** Significant digits kept for non-integers: float8 and numeric averages agree to far more than 9. */
const significantDigits = 9;
const numericText = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export function canonicalSqlValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'bigint') return `n:${value}`;
  if (typeof value === 'number') return canonicalNumber(value);
  if (typeof value === 'string')
    return numericText.test(value.trim()) ? canonicalNumber(Number(value)) : `s:${value}`;
  if (value instanceof Date) return `s:${dateText(value)}`;
  return `j:${JSON.stringify(value)}`;
}

function canonicalNumber(value: number): string {
  if (!Number.isFinite(value)) return `n:${value}`;
  return `n:${Number.isInteger(value) ? value : Number(value.toPrecision(significantDigits))}`;
}

/** A date at midnight prints as `YYYY-MM-DD` (drivers put `date` columns at UTC or local midnight). */
export function dateText(date: Date): string {
  const iso = date.toISOString();
  if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
  if (
    date.getHours() === 0 &&
    date.getMinutes() === 0 &&
    date.getSeconds() === 0 &&
    date.getMilliseconds() === 0
  ) {
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  }
  return iso;
}
