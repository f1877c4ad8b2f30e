// The shape every `edgerl` subcommand has, and the usage error they throw for bad input.
// Parsing is node:util's parseArgs (strict), so unknown flags are rejected before `run` sees them.
import type { ParseArgsConfig } from 'node:util';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/**
 * What a command does; its name and one-line summary are in the table in cli/commands.ts. Its module's
 * top level holds what `usage` and `options` need; what `run` needs (the store, TensorFlow.js, the model,
 * a server) it imports inside `run`, so `edgerl <command> --help` loads none of that.
 */
export interface Command {
  /** Usage text shown by `--help`: the synopsis and one line per option. */
  readonly usage: string;
  readonly options: OptionSpec;
  /** Whether positional arguments are accepted. */
  readonly positionals?: boolean;
  run(input: CommandInput): Promise<number | undefined>;
}

export interface CommandInput {
  readonly values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  readonly positionals: string[];
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** Bad input on the command line: printed as one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'usage';
}

export function defineCommand(command: Command): Command {
  return command;
}

/** Reads a string flag, or undefined when absent. */
export function stringFlag(values: CommandInput['values'], key: string): string | undefined {
  const value = values[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new UsageError(`--${key} takes a value`);
  return value;
}

/** Reads an integer flag within bounds, naming the flag when it is not one. */
export function intFlag(
  values: CommandInput['values'],
  key: string,
  fallback: number,
  bounds: { min?: number; max?: number } = {},
): number {
  const raw = stringFlag(values, key);
  if (raw === undefined) return fallback;
  const parsed = Number(raw);
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = bounds;
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new UsageError(`--${key} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return parsed;
}
