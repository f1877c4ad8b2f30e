// A process config's command line, derived from its schema's field docs: the parseArgs options, and
// argv (with each field's environment fallback) read into the config's nested input. Validation is the
// schema's; this only turns text into numbers and lists, naming the flag when a number is not one.
import type { ConfigField } from '../../protocol/config-docs.ts';
import { type CommandInput, type OptionSpec, stringFlag, UsageError } from '../command.ts';

/** parseArgs options for every field that has a flag. */
export function configOptions(fields: readonly ConfigField[]): OptionSpec {
  const options: OptionSpec = {};
  for (const { doc } of fields) {
    if (!doc.flag) continue;
    options[doc.flag] =
      doc.arg === undefined
        ? { type: 'boolean' }
        : doc.repeatable
          ? { type: 'string', multiple: true }
          : { type: 'string' };
  }
  return options;
}

/** The nested input object the flags (or their environment variables) give; absent ones are left out. */
export function readConfigFlags(
  fields: readonly ConfigField[],
  values: CommandInput['values'],
  env: NodeJS.ProcessEnv,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of fields) {
    const { flag, arg, sets, env: variable } = field.doc;
    if (!flag) continue;
    if (arg === undefined) {
      if (values[flag] === true && sets !== undefined) setPath(input, field.path, sets);
      continue;
    }
    if (field.doc.repeatable) {
      // Every occurrence, as given: the field's schema splits and checks them.
      const given = values[flag];
      const all = Array.isArray(given) ? given.map(String) : typeof given === 'string' ? [given] : [];
      if (all.length > 0) setPath(input, field.path, all);
      else if (variable && env[variable]) setPath(input, field.path, env[variable]);
      continue;
    }
    const raw = stringFlag(values, flag) ?? (variable && env[variable] ? env[variable] : undefined);
    if (raw !== undefined) setPath(input, field.path, fromText(field, flag, raw));
  }
  return input;
}

function fromText(field: ConfigField, flag: string, raw: string): unknown {
  switch (field.kind) {
    case 'number': {
      const value = Number(raw);
      if (raw.trim() === '' || Number.isNaN(value))
        throw new UsageError(`--${flag} must be a number, got "${raw}"`);
      return value;
    }
    case 'list':
      return raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    case 'boolean':
      if (raw !== 'true' && raw !== 'false')
        throw new UsageError(`--${flag} must be true or false, got "${raw}"`);
      return raw === 'true';
    case 'string':
    case 'choice':
      return raw;
  }
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  const last = path.at(-1);
  if (last !== undefined) node[last] = value;
}
