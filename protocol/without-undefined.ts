// A copy of an object without its `undefined` entries, so spreading it over defaults keeps the default
// where a caller passed `{ key: undefined }` (an unset flag). Leaves out nested objects: one level.

export function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
