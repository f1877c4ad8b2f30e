// Number formatting shared by the A/B report's verdict and its text rendering: signed differences
// with a true minus sign, percentages, p-values at the precision a report should claim.

/** `+0.123`, `−0.123`, or `0.000` when it rounds to zero (no sign on a zero). */
export function signed(value: number, digits: number): string {
  const text = Math.abs(value).toFixed(digits);
  if (Number(text) === 0) return text;
  return `${value < 0 ? '−' : '+'}${text}`;
}

/** `12.3%` for 0.123. */
export function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

/** `= 0.0123`, or `< 0.0001` below the precision a report should claim. */
export function formatP(p: number): string {
  if (Number.isNaN(p)) return '= n/a';
  return p < 0.0001 ? '< 0.0001' : `= ${p.toFixed(4)}`;
}
