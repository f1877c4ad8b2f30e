/** A figure right-aligned in `width` columns with `digits` decimals; NaN prints as a dash. */
export function fmt(value: number, width = 7, digits = 2): string {
  return (Number.isFinite(value) ? value.toFixed(digits) : '—').padStart(width);
}
