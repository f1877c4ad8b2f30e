// Canonical JSON: object keys sorted, no whitespace, so that two values that are deeply equal give the
// same text. Used for RULER's shared-prefix detection and cache keys, and to tell a retried store
// write from a conflicting one (jsonb keeps no key order); not a general RFC 8785 (JCS)
// implementation (numbers use JavaScript's own formatting, which JCS also specifies, but no other checks).

/** Deterministic JSON text of a JSON-like value; object keys are sorted, `undefined` properties dropped. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, '$'));
}

/**
 * Deep equality of JSON-like values, independent of object key order; `undefined` and `null` are
 * the same (a field JSON left out and one stored as null).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
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
