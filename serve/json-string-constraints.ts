// A string schema's `format` and patterns (json-schema-grammar.ts's strings): the matchers that filter
// `enum` values, and the automaton that guides free text, bounded by the length limits and cached for the
// schemas of recent requests. Leaves lengths alone to the compiler, and the regex subset to
// json-string-pattern.ts.
import { annotations, isObject, type Schema, SchemaProblem } from './json-schema-problem.ts';
import { formatPatterns, isGuidedFormat, patternFormats } from './json-string-formats.ts';
import {
  boundPattern,
  intersectDfas,
  type PatternDfa,
  PatternProblem,
  patternDfa,
  type StringPattern,
} from './json-string-pattern.ts';

/**
 * The automaton of the schema's `format` and patterns within [minLength, maxLength], or null when no
 * string satisfies them all. Only for a schema that has a format or pattern (stringMatchers found one).
 */
export function boundedStringPattern(
  schema: Schema,
  path: string,
  minLength: number,
  maxLength: number,
): StringPattern | null {
  const key = JSON.stringify([schema.format, schema.pattern, schema.allOf, minLength, maxLength]);
  let pattern = recentPatterns.get(key);
  if (pattern === undefined) {
    const dfa = stringDfa(schema, path) as PatternDfa;
    pattern = withPatternProblem(`${path}.${'format' in schema ? 'format' : 'pattern'}`, () =>
      boundPattern(dfa, minLength, maxLength),
    );
  } else recentPatterns.delete(key);
  // Least recently used first: an episode's every turn sends the same schema.
  recentPatterns.set(key, pattern);
  for (const old of recentPatterns.keys()) {
    if (recentPatterns.size <= maxRecentPatterns) break;
    recentPatterns.delete(old);
  }
  return pattern;
}

/** A `pattern` and where it is: the schema's own, or one of an `allOf` of patterns. */
export interface PatternAt {
  readonly source: string;
  readonly path: string;
}

/**
 * The schema's patterns: its `pattern` and, in an `allOf`, entries that hold a `pattern` and nothing
 * else that constrains (what z.toJSONSchema writes for several string checks, `.startsWith().endsWith()`).
 */
export function patternsOf(schema: Schema, path: string): PatternAt[] {
  const found: PatternAt[] = [];
  const take = (value: unknown, at: string) => {
    if (typeof value !== 'string') throw new SchemaProblem(at, 'must be a string');
    found.push({ source: value, path: at });
  };
  if ('pattern' in schema) take(schema.pattern, `${path}.pattern`);
  if ('allOf' in schema) {
    const entries = schema.allOf;
    if (!Array.isArray(entries)) throw new SchemaProblem(`${path}.allOf`, 'must be an array of schemas');
    entries.forEach((entry, index) => {
      const at = `${path}.allOf.${index}`;
      const others = isObject(entry)
        ? Object.keys(entry).filter((key) => !annotations.has(key) && key !== 'pattern')
        : [];
      if (!isObject(entry) || !('pattern' in entry) || others.length > 0) {
        throw new SchemaProblem(
          at,
          '"allOf" is supported only as a list of {"pattern": …} (several string patterns); move other constraints into the schema itself',
        );
      }
      take(entry.pattern, `${at}.pattern`);
    });
  }
  return found;
}

/** How JSON Schema reads `pattern` and the formats: ECMA-262 expressions with the `u` flag, unanchored. */
export function stringMatchers(schema: Schema, path: string): RegExp[] {
  const matchers: RegExp[] = [];
  const patterns = patternsOf(schema, path);
  if ('format' in schema) {
    const format = schema.format;
    const carriedByPattern = typeof format === 'string' && patternFormats.has(format) && patterns.length > 0;
    if (!isGuidedFormat(format) && !carriedByPattern) {
      throw new SchemaProblem(
        `${path}.format`,
        `${JSON.stringify(format)} is not supported by guided decoding (supported: ${Object.keys(formatPatterns).join(', ')}); drop it, or describe the string with a "pattern"`,
      );
    }
    if (isGuidedFormat(format)) matchers.push(new RegExp(formatPatterns[format], 'u'));
  }
  for (const pattern of patterns) {
    try {
      matchers.push(new RegExp(pattern.source, 'u'));
    } catch {
      throw new SchemaProblem(pattern.path, 'is not an ECMA-262 regular expression');
    }
  }
  return matchers;
}

/** Compiled patterns of recent schemas by format, patterns and length bounds (a DFA costs milliseconds). */
const recentPatterns = new Map<string, StringPattern | null>();
const maxRecentPatterns = 256;

/** The DFA of the `format` and every pattern together, or undefined when there is none. */
function stringDfa(schema: Schema, path: string): PatternDfa | undefined {
  let dfa = isGuidedFormat(schema.format) ? patternDfa(formatPatterns[schema.format]) : undefined;
  for (const pattern of patternsOf(schema, path)) {
    const next = withPatternProblem(pattern.path, () => patternDfa(pattern.source));
    const before = dfa;
    dfa = before ? withPatternProblem(pattern.path, () => intersectDfas(before, next)) : next;
  }
  return dfa;
}

function withPatternProblem<T>(path: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (!(error instanceof PatternProblem)) throw error;
    throw new SchemaProblem(
      path,
      `${error.message}; guided decoding follows a regular subset (literals, classes, groups, "|", quantifiers, "^" at the start, "$" at the end), so rewrite it in that subset or drop it and check it in your own code`,
    );
  }
}
