// The base of every process config's error: the list of problems, each naming the field (by its flag
// where it has one) and how to fix it, kept as `issues`; subclasses add their name and stable `code`.

export abstract class ConfigError extends Error {
  abstract readonly code: string;
  constructor(
    readonly issues: readonly string[],
    heading: string,
    separator = '; ',
  ) {
    super(`${heading}${issues.join(separator)}`);
  }
}
