// Canonical JSON: object keys sorted, no whitespace, so that two values that are deeply equal give the
// same text. Used for RULER's shared-prefix detection and for cache keys; not a general RFC 8785 (JCS)
// implementation (numbers use JavaScript's own formatting, which JCS also specifies, but no other checks).

/** Deterministic JSON text of a JSON-like value; object keys are sorted, `undefined` properties dropped. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, '$'));
}

/** Deep equality of JSON-like values, independent of object key order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function sortKeys(value: unknown, path: string): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    // JSON.stringify would silently turn NaN into null, making two different values hash alike.
    throw new TypeError(`canonicalJson: ${path} is ${value}, which JSON cannot represent`);
  }
  if (Array.isArray(value)) return value.map((item, index) => sortKeys(item, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const item = (value as Record<string, unknown>)[key];
      if (item !== undefined) out[key] = sortKeys(item, `${path}.${key}`);
    }
    return out;
  }
  return value;
}
