// Number and time formatting shared by the console's pages: a dash for what is missing, fixed
// decimals, percentages (the A/B report's), and UTC times (a server and its readers rarely share a
// time zone).
import { percent as percentOf } from '../experiments/format-numbers.ts';

/** `–` for null, undefined and NaN, else `value.toFixed(digits)`. */
export function fixed(value: number | null | undefined, digits: number): string {
  return value === null || value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);
}

/** `12.3%` for 0.123; `–` when missing. */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined || Number.isNaN(value) ? '–' : percentOf(value);
}

/** `2026-11-30 14:05:09Z`; `–` when missing. */
export function utc(value: Date | string | number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return '–';
  return `${date.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** `1,234` with thousands separators. */
export function count(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Milliseconds as `850 ms` or `12.3 s`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The first 8 characters of an id: enough to tell rows apart on a page, the full id is in the link. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}
