// Environments by name from what a user's module exports: a record (name → environment) or an
// array, each entry checked to be what defineEnvironment returns. Pure: the import is the caller's.
import type { Environment } from './environment.ts';
import { EnvironmentsError } from './environments-error.ts';

export type EnvironmentRecord = Readonly<Record<string, Environment>>;
/** What an environments module may export: an array, or a record whose keys are the names. */
export type EnvironmentList = readonly Environment[] | EnvironmentRecord;

/** Fields defineEnvironment always fills, with the type each must have. */
const requiredFields = {
  name: 'string',
  systemPrompt: 'string',
  maxTurns: 'number',
  toolTimeoutMs: 'number',
  sampleTask: 'function',
  tasks: 'function',
} as const;

/**
 * Checks `list` and returns it by name. `source` names where it came from in messages
 * (`./my-envs.ts: environments`). A record's keys must be the environments' own names, so that the
 * name a rollout asks for is the one stored with its trajectories.
 */
export function environmentRecord(list: unknown, source: string): EnvironmentRecord {
  if (!Array.isArray(list) && !isPlainRecord(list)) {
    throw new EnvironmentsError(
      'bad-export',
      `${source} is ${describe(list)}, not an array or a record of environments`,
    );
  }
  const entries: [string, unknown][] = Array.isArray(list)
    ? list.map((value, index) => [`[${index}]`, value])
    : Object.entries(list).map(([key, value]) => [`.${key}`, value]);
  const out: Record<string, Environment> = {};
  for (const [where, value] of entries) {
    const problem = notAnEnvironment(value);
    if (problem) {
      throw new EnvironmentsError(
        'not-an-environment',
        `${source}${where} is not an environment made with defineEnvironment (${problem})`,
      );
    }
    const environment = value as Environment;
    if (!Array.isArray(list) && where !== `.${environment.name}`) {
      throw new EnvironmentsError(
        'not-an-environment',
        `${source}${where} is named "${environment.name}": a record's keys must be the environments' names`,
      );
    }
    if (Object.hasOwn(out, environment.name)) {
      throw new EnvironmentsError('name-clash', `${source} has two environments named "${environment.name}"`);
    }
    out[environment.name] = environment;
  }
  return out;
}

function notAnEnvironment(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return `it is ${describe(value)}`;
  const record = value as Record<string, unknown>;
  for (const [field, type] of Object.entries(requiredFields)) {
    if (typeof record[field] !== type) return `its ${field} is not a ${type}`;
  }
  if (!Array.isArray(record.tools)) return 'its tools is not an array';
  if (!Array.isArray(record.requires)) return 'its requires is not an array';
  const schema = record.taskSchema as { safeParse?: unknown } | undefined;
  if (typeof schema?.safeParse !== 'function') return 'its taskSchema is not a zod schema';
  return undefined;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object of another kind' : `a ${typeof value}`;
}
