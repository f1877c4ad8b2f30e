// A zod issue in words a client can act on: the field's path and what to send there, for the 400s of
// the edge and serve-model. zod's own messages ("Invalid input", "expected record") name no field and
// speak of its types; these name JSON's. Pure: the issue and the value that was validated in, a path
// and a sentence out. Refinements (`custom` issues) keep their own words: they already say what to do.
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

export interface IssueText {
  /** Where the value at fault is: a union's mismatch is followed into the branch the value fits. */
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** `issue` from validating `input`, in words. */
export function issueMessage(issue: Issue, input: unknown): IssueText {
  const value = valueAt(input, issue.path);
  switch (issue.code) {
    case 'unrecognized_keys':
      // Reported on the object; the key itself is the field at fault.
      return { path: [...issue.path, issue.keys[0] ?? ''], message: 'unknown field' };
    case 'invalid_type':
      return at(issue, typeMessage(issue.expected, value));
    case 'invalid_value':
      return at(issue, valueMessage(issue.values, value));
    case 'invalid_union':
      return unionMessage(issue, input, value);
    case 'too_small':
      return at(issue, sizeMessage('at least', issue.origin, Number(issue.minimum), issue.inclusive, value));
    case 'too_big':
      return at(issue, sizeMessage('at most', issue.origin, Number(issue.maximum), issue.inclusive, value));
    default:
      return at(issue, issue.message);
  }
}

const at = (issue: Issue, message: string): IssueText => ({ path: issue.path, message });

function unionMessage(
  issue: Extract<Issue, { code: 'invalid_union' }>,
  input: unknown,
  value: unknown,
): IssueText {
  // A discriminated union (`role`): zod reports it at the discriminator with the values it knows.
  // (zod 4.6 adds `options` to the issue; its type does not declare them.)
  const options = (issue as { options?: unknown }).options;
  if ('discriminator' in issue && Array.isArray(options)) {
    return at(issue, valueMessage(options as readonly z.core.util.Primitive[], value));
  }
  // Plain unions (text or text parts): the branch whose type the value has says what is wrong in it.
  const fitting = issue.errors.find((branch) => !branch.every(isWrongTypeHere));
  const inner = fitting?.[0];
  if (inner) return issueMessage({ ...inner, path: [...issue.path, ...inner.path] } as Issue, input);
  const expected = issue.errors.flatMap((branch) =>
    branch.flatMap((inner) => (inner.code === 'invalid_type' ? [jsonType(inner.expected)] : [])),
  );
  if (expected.length === 0) return at(issue, issue.message);
  return at(issue, typeMessage([...new Set(expected)].join(' or '), value, true));
}

/** An issue saying the union's value itself has the wrong type: that branch does not fit at all. */
const isWrongTypeHere = (issue: Issue): boolean => issue.code === 'invalid_type' && issue.path.length === 0;

function typeMessage(expected: string, value: unknown, named = false): string {
  const wanted = named ? expected : jsonType(expected);
  if (value === undefined) return `is required (${wanted})`;
  return `must be ${wanted}, not ${kindOf(value)}`;
}

function valueMessage(values: readonly z.core.util.Primitive[], value: unknown): string {
  const choices = values.map((choice) => JSON.stringify(choice) ?? String(choice));
  const list =
    choices.length === 1
      ? (choices[0] as string)
      : `one of ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}`;
  if (value === undefined) return `is required; send ${list}`;
  const shown =
    typeof value === 'string' || typeof value === 'number' ? JSON.stringify(value) : kindOf(value);
  return `${shown} is not accepted here; send ${list}`;
}

function sizeMessage(
  bound: 'at least' | 'at most',
  origin: string,
  limit: number,
  inclusive: boolean | undefined,
  value: unknown,
): string {
  const exclusive = inclusive === false;
  switch (origin) {
    case 'array':
    case 'set': {
      if (bound === 'at least' && limit === 1 && !exclusive) return 'must not be empty';
      const count = exclusive ? (bound === 'at least' ? limit + 1 : limit - 1) : limit;
      const length = Array.isArray(value) ? ` (it has ${value.length})` : '';
      return `must have ${bound} ${count} item${count === 1 ? '' : 's'}${length}`;
    }
    case 'string': {
      if (bound === 'at least' && limit === 1 && !exclusive) return 'must not be empty';
      const count = exclusive ? (bound === 'at least' ? limit + 1 : limit - 1) : limit;
      return `must be ${bound} ${count} character${count === 1 ? '' : 's'} long`;
    }
    default: {
      const relation = exclusive ? (bound === 'at least' ? 'greater than' : 'less than') : bound;
      const shown = typeof value === 'number' ? `; got ${value}` : '';
      return `must be ${relation} ${limit}${shown}`;
    }
  }
}

/** A zod type's name as JSON says it, with its article. */
function jsonType(expected: string): string {
  switch (expected) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'int':
      return 'an integer';
    case 'boolean':
      return 'true or false';
    case 'array':
    case 'tuple':
    case 'set':
      return 'an array';
    case 'object':
    case 'record':
    case 'map':
      return 'an object';
    case 'null':
      return 'null';
    default:
      return expected;
  }
}

/** What the client sent, in JSON's words. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return Number.isInteger(value) ? 'a number' : `a fractional number (${value})`;
    case 'boolean':
      return String(value);
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
